package postgres

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/keyword"
)

// hitSource describes how to read hits of one kind: the table, its integer
// key, the columns making a hit, and the liveness filter.
type hitSource struct {
	table, key, cols, live string
}

var hitSources = map[imprint.Kind]hitSource{
	imprint.KindMemory: {"memories", "rid",
		"x.rid, x.id, x.content, '', x.session_id, NULL::text, x.source_message_ids", " AND x.superseded_by IS NULL AND x.forgotten_at IS NULL"},
	imprint.KindTrace: {"traces", "rid",
		"x.rid, x.id, x.user_text, x.agent_text, x.session_id, x.episode_id, NULL::text", ""},
	imprint.KindMessage: {"messages", "seq",
		"x.seq, x.id, x.content, '', x.session_id, NULL::text, NULL::text", ""},
}

func sourceOf(k imprint.Kind) (hitSource, error) {
	src, ok := hitSources[k]
	if !ok {
		return src, imprint.Invalidf("kind %q is not memory, trace or message", k)
	}
	return src, nil
}

type scored struct {
	hit imprint.Hit
	rid int64
}

// scanHit reads the columns of hitSource.cols plus trailing extras.
func scanHit(kind imprint.Kind, rows pgx.Rows, extra ...any) (int64, imprint.Hit, error) {
	var rid int64
	var h imprint.Hit
	var t1, t2, session string
	var episode, src *string
	dst := append([]any{&rid, &h.ID, &t1, &t2, &session, &episode, &src}, extra...)
	if err := rows.Scan(dst...); err != nil {
		return 0, h, err
	}
	h.Kind = kind
	var parts []string
	for _, s := range []string{t1, t2} {
		if strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
	}
	h.Text = strings.TrimSpace(strings.Join(parts, "\n"))
	if session != "" {
		h.SessionID = &session
	}
	h.EpisodeID = episode
	if src != nil {
		h.SourceMessageIDs = []string{}
		if err := json.Unmarshal([]byte(*src), &h.SourceMessageIDs); err != nil {
			return 0, h, err
		}
	}
	return rid, h, nil
}

// hitFilter is the condition on the hit table x (scope, liveness, session,
// exclusions), its values added to a.
func hitFilter(a *args, scope imprint.Scope, sessionID, workspace string, global bool, exclude []string, src hitSource) string {
	filter := a.scope("x", scope) + src.live
	if sessionID != "" {
		filter += ` AND x.session_id = ` + a.add(sessionID)
	}
	filter += a.workspace("x", workspace, global)
	if len(exclude) > 0 {
		filter += ` AND x.id <> ALL(` + a.add(exclude) + `::text[])`
	}
	return filter
}

// FTS5's bm25 constants (bm25.go).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// termQuery is the tsquery of one term: its words as a phrase (a term such
// as update_reservation_baggages is several words to the parser), never
// parsed as query syntax.
func termQuery(a *args, term string) string {
	return `phraseto_tsquery('imprint', ` + a.add(term) + `)`
}

// likePattern is the LIKE pattern of a substring; CJK runs hold no LIKE
// metacharacter, but escape them anyway.
func likePattern(term string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(term) + "%"
}

// bm25IDF is FTS5's idf of a phrase matching hits of total rows.
func bm25IDF(total, hits int64) float64 {
	idf := ftsLog((float64(total-hits) + 0.5) / (float64(hits) + 0.5))
	if idf <= 0 {
		idf = 1e-6
	}
	return idf
}

// exactCountBelow is the table size (the planner's estimate) under which
// the idf's record count is exact.
const exactCountBelow = 10000

// idfs returns the idf of each word term (in column col) and of each CJK
// phrase over the kind's live records of every scope, in one statement,
// and the tsquery of each word term, for the search to send as a value: a
// tsquery function in the search statement would run for every row once
// its prepared statement has a generic plan.
func (db *DB) idfs(ctx context.Context, src hitSource, col string, words, tri []string, tot kindTotals) (termStats, error) {
	var a args
	lim := db.limits()
	countCap := lim.common + 1
	where := func(cond string) string { return liveWhere(src, cond) }
	// The record counts of the indexes are tot's (bm25.go); a word's
	// idf is over the word index's, a CJK phrase's over the trigram
	// index's, as FTS5's are.
	sel := []string{`1::bigint`}
	// In a large table a term's records are counted up to countCap: a
	// term with more is common, and its count is the planner's estimate
	// (below), as the table's is; counting all of a common word's records
	// read most of the table.
	var limit any
	if big, _ := db.bigTables.Load(src.table); big == true {
		limit = countCap
	}
	limSQL := ""
	if len(words)+len(tri) > 0 {
		limSQL = ` LIMIT ` + a.add(limit) + `::bigint`
	}
	for _, w := range words {
		sel = append(sel, `(SELECT COUNT(*) FROM (SELECT 1 FROM `+src.table+where(col+` @@ `+termQuery(&a, w))+limSQL+`) n)`)
	}
	for _, t := range tri {
		sel = append(sel, `(SELECT COUNT(*) FROM (SELECT 1 FROM `+src.table+where(`cjk LIKE `+a.add(likePattern(t)))+limSQL+`) n)`)
	}
	for _, w := range words {
		sel = append(sel, termQuery(&a, w)+`::text`)
	}
	counts := make([]int64, len(sel)-len(words))
	tqs := make([]string, len(words))
	dst := make([]any, 0, len(sel))
	for i := range counts {
		dst = append(dst, &counts[i])
	}
	for i := range tqs {
		dst = append(dst, &tqs[i])
	}
	if err := db.pool.QueryRow(ctx, `SELECT `+strings.Join(sel, ", "), a...).Scan(dst...); err != nil {
		return termStats{}, err
	}
	db.bigTables.Store(src.table, tot.at >= lim.exactBelow)
	if limit != nil {
		for i, n := range counts[1:] {
			if n < countCap {
				continue
			}
			var cond string
			if i < len(words) {
				cond = col + ` @@ ` + quoteLiteral(tqs[i]) + `::tsquery`
			} else {
				cond = `cjk LIKE ` + quoteLiteral(likePattern(tri[i-len(words)]))
			}
			est, err := db.estimateRows(ctx, `SELECT 1 FROM `+src.table+where(cond))
			if err != nil {
				return termStats{}, err
			}
			counts[1+i] = max(est, countCap)
		}
	}
	wi, ti := make([]float64, len(words)), make([]float64, len(tri))
	for i := range words {
		wi[i] = bm25IDF(tot.words.rows, counts[1+i])
	}
	for i := range tri {
		ti[i] = bm25IDF(tot.tri.rows, counts[1+len(words)+i])
	}
	return termStats{wordIDF: wi, triIDF: ti, tsqueries: tqs, wordHits: counts[1 : 1+len(words)], triHits: counts[1+len(words):], totals: tot}, nil
}

// termStats are the idfs of a query's word terms and CJK phrases, how
// many records hold each, and the word terms' tsqueries.
type termStats struct {
	wordIDF, triIDF   []float64
	wordHits, triHits []int64
	tsqueries         []string
	totals            kindTotals // the kind's indexes
}

// pruneAbove is the number of records above which a term is common: a
// search ranks first the records holding its rarer terms, and reads the
// records holding only common terms only when they could still rank. In a
// large table (exactCountBelow) the records of a term are counted up to
// one more, and a common term's count is the planner's estimate
// (termLimits).
const pruneAbove = 2000

// estimateRows is the planner's estimate of the rows query returns.
func (db *DB) estimateRows(ctx context.Context, query string) (int64, error) {
	var plan string
	if err := db.pool.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+query).Scan(&plan); err != nil {
		return 0, err
	}
	return planRows(plan)
}

// searchIndex returns up to want hits of the kind matching any word term
// in column col (words or, for messages, who) or any CJK phrase, within
// the query's scope and filters, best first: the filters are in the
// statement, so the index never returns another scope's rows to filter.
//
// A term's part of a score is below its idf times k1+1 (bm25.go), so
// when a query has rare and common terms (pruneAbove) the records holding
// a rare one are ranked first, on every term; if the last of the want best
// scores more than the common terms' idfs together, no record holding only
// common terms can rank among them and those are never read. Otherwise
// every match is ranked. Either way the hits are the same.
func (db *DB) searchIndex(ctx context.Context, q imprint.TextQuery, src hitSource, col string, words, tri []string, want int) ([]scored, error) {
	if len(words) == 0 && len(tri) == 0 {
		return nil, nil
	}
	tot, err := db.totals(ctx, q.Kind, src)
	if err != nil {
		return nil, err
	}
	st, err := db.idfs(ctx, src, col, words, tri, tot)
	if err != nil {
		return nil, err
	}
	return db.searchWith(ctx, q, src, col, words, tri, st, want)
}

// searchWith is searchIndex with the terms' stats st.
func (db *DB) searchWith(ctx context.Context, q imprint.TextQuery, src hitSource, col string, words, tri []string, st termStats, want int) ([]scored, error) {
	all := func(int64) bool { return true }
	common := db.limits().common
	rare := func(n int64) bool { return n <= common }
	bound, nRare, nCommon := 0.0, 0, 0
	for i, n := range st.wordHits {
		if rare(n) {
			nRare++
		} else {
			nCommon++
			bound += st.wordIDF[i] * (bm25K1 + 1)
		}
	}
	for i, n := range st.triHits {
		if rare(n) {
			nRare++
		} else {
			nCommon++
			bound += st.triIDF[i] * (bm25K1 + 1)
		}
	}
	if nRare > 0 && nCommon > 0 {
		out, err := db.rankIndex(ctx, q, src, col, words, tri, st, rare, want)
		if err != nil {
			return nil, err
		}
		if len(out) == want && out[want-1].hit.Score > bound*(1+1e-9) {
			return out, nil
		}
	}
	return db.rankIndex(ctx, q, src, col, words, tri, st, all, want)
}

// rankIndex returns the want best records, on every term, of those holding
// a term whose record count matches says yes to.
func (db *DB) rankIndex(ctx context.Context, q imprint.TextQuery, src hitSource, col string, words, tri []string, st termStats,
	matches func(int64) bool, want int) ([]scored, error) {
	var a args
	filter := hitFilter(&a, q.Scope, q.SessionID, q.Workspace, q.IncludeGlobal, q.ExcludeIDs, src)
	var match, score []string
	for i := range words {
		if matches(st.wordHits[i]) {
			match = append(match, `x.`+col+` @@ `+a.add(st.tsqueries[i])+`::tsquery`)
		}
	}
	for i, t := range tri {
		if matches(st.triHits[i]) {
			match = append(match, `x.cjk LIKE `+a.add(likePattern(t)))
		}
	}
	// The scores (bm25.go) are FTS5's: of the word index, or of the
	// trigram index.
	var joins string
	if len(words) > 0 {
		var ws string
		ws, joins = wordScore(&a, q.Kind, col, st.tsqueries, st.wordIDF, st.totals.words.avgdl())
		score = append(score, ws)
	}
	if len(tri) > 0 {
		score = append(score, trigramScore(&a, tri, st.triIDF, st.totals.tri.avgdl()))
	}
	query := `SELECT ` + src.cols + `, (` + strings.Join(score, " + ") + `)::float8 AS score FROM ` + src.table +
		` x` + joins + ` WHERE ` + filter + ` AND (` + strings.Join(match, " OR ") + `) ORDER BY score DESC, x.` + src.key +
		` LIMIT ` + a.add(want)
	rows, err := db.pool.Query(ctx, query, a...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []scored
	for rows.Next() {
		var s float64
		rid, h, err := scanHit(q.Kind, rows, &s)
		if err != nil {
			return nil, err
		}
		h.Score = s
		out = append(out, scored{hit: h, rid: rid})
	}
	return out, rows.Err()
}

// SearchText finds records of q.Kind matching any term of q.Text within the
// scope, ranked best first as SQLite's store ranks them (bm25-like: idf
// times the term's weight in the record). Messages are also scored by
// their context: who said them and the turns around them. A query with no
// usable term returns no hits. ErrInvalid for an empty scope or unknown
// kind.
func (db *DB) SearchText(ctx context.Context, q imprint.TextQuery) ([]imprint.Hit, error) {
	if err := validScope(q.Scope); err != nil {
		return nil, err
	}
	src, err := sourceOf(q.Kind)
	if err != nil {
		return nil, err
	}
	limit := imprint.SearchLimit(q.Limit)
	terms := keyword.Query(q.Text)
	if terms.Empty() {
		return []imprint.Hit{}, nil
	}
	// As on SQLite, the word and trigram indexes are ranked apart, each
	// twice the limit deep, and a record both find sums its two scores (a
	// memory or trace query of one index needs only the limit).
	depth := 2 * limit
	if q.Kind != imprint.KindMessage && (len(terms.Words) == 0 || len(terms.Trigram) == 0) {
		depth = limit
	}
	merged := map[int64]*scored{}
	var all []*scored
	for _, part := range []struct{ words, tri []string }{{nil, terms.Trigram}, {terms.Words, nil}} {
		if len(part.words)+len(part.tri) == 0 {
			continue
		}
		var hits []scored
		var err error
		if q.Kind == imprint.KindMemory && len(part.tri) == 0 {
			hits, _, _, err = db.searchMemories(ctx, q, src, "words", part.words, depth)
		} else {
			hits, err = db.searchIndex(ctx, q, src, "words", part.words, part.tri, depth)
		}
		if err != nil {
			return nil, dbErr("search text", err)
		}
		for i, h := range hits {
			if s, ok := merged[h.rid]; ok {
				s.hit.Score += h.hit.Score
				continue
			}
			merged[h.rid] = &hits[i]
			all = append(all, &hits[i])
		}
	}
	if q.Kind == imprint.KindMessage {
		if all, err = db.messageContext(ctx, q, src, all); err != nil {
			return nil, dbErr("search text", err)
		}
		if len(all) < limit && len(terms.Words) > 0 {
			if all, err = db.messagesBySpeaker(ctx, q, src, terms.Words, limit, all); err != nil {
				return nil, dbErr("search text", err)
			}
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].hit.Score != all[j].hit.Score {
			return all[i].hit.Score > all[j].hit.Score
		}
		return all[i].rid < all[j].rid
	})
	out := make([]imprint.Hit, 0, min(limit, len(all)))
	for _, s := range all {
		if len(out) == limit {
			break
		}
		out = append(out, s.hit)
	}
	return out, nil
}

// Message context weights, as SQLite's store scores them: a hit's reply
// gains weightReply of its score, the message it answers weightAnswered,
// and a hit whose speaker the query names weightSpeaker more; a message
// found by its speaker alone scores weightSpeaker times its speaker rank.
const (
	weightReply    = 0.7
	weightAnswered = 0.4
	weightSpeaker  = 1.5
)

// messageContext scores what the keyword index leaves out of a message:
// who said it and the turns around it. The next message of a hit's
// session gains weightReply of the hit's score, the previous one
// weightAnswered, and a neighbour that did not match becomes a hit with
// that score when the query's filters allow it; then a hit whose speaker
// the query names gains weightSpeaker of its score.
func (db *DB) messageContext(ctx context.Context, q imprint.TextQuery, src hitSource, hits []*scored) ([]*scored, error) {
	if len(hits) == 0 {
		return hits, nil
	}
	named := keyword.QueryNames(q.Text)
	seqs := make([]int64, len(hits))
	byRID := make(map[int64]*scored, len(hits))
	for i, h := range hits {
		seqs[i] = h.rid
		byRID[h.rid] = h
	}
	rows, err := db.pool.Query(ctx, `SELECT m.seq, m.speaker,
		(SELECT n.seq FROM messages n WHERE n.tenant = m.tenant AND n.user_id = m.user_id AND n.agent = m.agent
			AND n.session_id = m.session_id AND n.seq > m.seq ORDER BY n.seq LIMIT 1),
		(SELECT p.seq FROM messages p WHERE p.tenant = m.tenant AND p.user_id = m.user_id AND p.agent = m.agent
			AND p.session_id = m.session_id AND p.seq < m.seq ORDER BY p.seq DESC LIMIT 1)
		FROM messages m WHERE m.seq = ANY($1::bigint[]) AND m.tenant = $2 AND m.user_id = $3 AND m.agent = $4`,
		seqs, q.Scope.Tenant, q.Scope.User, q.Scope.Agent)
	if err != nil {
		return nil, err
	}
	boost := map[int64]float64{}
	speakers := map[int64]string{}
	for rows.Next() {
		var rid int64
		var speaker string
		var next, prev *int64
		if err := rows.Scan(&rid, &speaker, &next, &prev); err != nil {
			rows.Close()
			return nil, err
		}
		speakers[rid] = speaker
		if next != nil {
			boost[*next] += weightReply * byRID[rid].hit.Score
		}
		if prev != nil {
			boost[*prev] += weightAnswered * byRID[rid].hit.Score
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var missing []int64
	for rid, add := range boost {
		if h, ok := byRID[rid]; ok {
			h.hit.Score += add
			continue
		}
		missing = append(missing, rid)
	}
	if len(missing) > 0 {
		var a args
		keys := a.add(missing)
		filter := hitFilter(&a, q.Scope, q.SessionID, q.Workspace, q.IncludeGlobal, q.ExcludeIDs, src)
		rows, err := db.pool.Query(ctx, `SELECT `+src.cols+`, x.speaker FROM messages x
			WHERE x.seq = ANY(`+keys+`::bigint[]) AND `+filter, a...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var speaker string
			rid, h, err := scanHit(q.Kind, rows, &speaker)
			if err != nil {
				return nil, err
			}
			h.Score = boost[rid]
			speakers[rid] = speaker
			hits = append(hits, &scored{hit: h, rid: rid})
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	if len(named) > 0 {
		for _, h := range hits {
			if keyword.NamesSpeaker(named, speakers[h.rid]) {
				h.hit.Score *= 1 + weightSpeaker
			}
		}
	}
	return hits, nil
}

// messagesBySpeaker adds, to a message search that found fewer than limit
// hits by the messages' words, the messages of a speaker the query names,
// scored weightSpeaker times their rank on the speaker column, so a
// message that says the words ranks first.
func (db *DB) messagesBySpeaker(ctx context.Context, q imprint.TextQuery, src hitSource, words []string, limit int, hits []*scored) ([]*scored, error) {
	found, err := db.searchIndex(ctx, q, src, "who", words, nil, limit)
	if err != nil {
		return nil, err
	}
	have := make(map[int64]bool, len(hits))
	for _, h := range hits {
		have[h.rid] = true
	}
	for _, h := range found {
		if !have[h.rid] {
			h.hit.Score *= weightSpeaker
			hits = append(hits, &scored{hit: h.hit, rid: h.rid})
		}
	}
	return hits, nil
}

// SupportsTermCounts implements imprint.TermCounter: always true.
func (db *DB) SupportsTermCounts() bool { return true }

// CountTermMatches returns, for each term, how many records of kind in
// scope hold it in the keyword index, counting at most limit per term. A
// term with no searchable token counts 0. ErrInvalid for an unknown kind or
// an incomplete scope.
func (db *DB) CountTermMatches(ctx context.Context, scope imprint.Scope, kind imprint.Kind, terms []string, limit int) ([]int, error) {
	src, err := sourceOf(kind)
	if err != nil {
		return nil, err
	}
	if err := validScope(scope); err != nil {
		return nil, err
	}
	limit = max(limit, 1)
	out := make([]int, len(terms))
	for i, t := range terms {
		fq := keyword.Query(t)
		if fq.Empty() {
			continue
		}
		var a args
		filter := hitFilter(&a, scope, "", "", false, nil, src)
		var match []string
		for _, w := range fq.Words {
			match = append(match, `x.words @@ `+termQuery(&a, w))
		}
		for _, c := range fq.Trigram {
			match = append(match, `x.cjk LIKE `+a.add(likePattern(c)))
		}
		if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM `+src.table+` x WHERE `+filter+
			` AND (`+strings.Join(match, " OR ")+`) LIMIT `+a.add(limit)+`) c`, a...).Scan(&out[i]); err != nil {
			return nil, dbErr("count term matches", err)
		}
	}
	return out, nil
}
