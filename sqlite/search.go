package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"sort"
	"strings"

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
		"x.rid, x.id, x.content, '', x.session_id, NULL, x.source_message_ids", " AND x.superseded_by IS NULL AND x.forgotten_at IS NULL"},
	imprint.KindTrace: {"traces", "rid",
		"x.rid, x.id, x.user_text, x.agent_text, x.session_id, x.episode_id, NULL", ""},
	imprint.KindMessage: {"messages", "seq",
		"x.seq, x.id, x.content, '', x.session_id, NULL, NULL", ""},
}

func sourceOf(k imprint.Kind) (hitSource, error) {
	src, ok := hitSources[k]
	if !ok {
		return src, imprint.Invalidf("kind %q is not memory, trace or message", k)
	}
	return src, nil
}

// scanHit reads the columns of hitSource.cols plus trailing extras.
func scanHit(kind imprint.Kind, rows *sql.Rows, extra ...any) (int64, imprint.Hit, error) {
	var rid int64
	var h imprint.Hit
	var t1, t2, session string
	var episode, src sql.NullString
	dst := append([]any{&rid, &h.ID, &t1, &t2, &session, &episode, &src}, extra...)
	if err := rows.Scan(dst...); err != nil {
		return 0, h, err
	}
	h.Kind = kind
	h.Text = strings.TrimSpace(strings.Join(nonEmpty(t1, t2), "\n"))
	if session != "" {
		h.SessionID = &session
	}
	if episode.Valid {
		h.EpisodeID = &episode.String
	}
	if src.Valid {
		h.SourceMessageIDs = []string{}
		if err := json.Unmarshal([]byte(src.String), &h.SourceMessageIDs); err != nil {
			return 0, h, err
		}
	}
	return rid, h, nil
}

func nonEmpty(ss ...string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

type scored struct {
	hit imprint.Hit
	rid int64
}

// readHits reads hits with a trailing bm25 column, reporting -bm25 as the
// score.
func readHits(kind imprint.Kind, rows *sql.Rows) ([]scored, error) {
	defer rows.Close()
	var out []scored
	for rows.Next() {
		var bm float64
		rid, h, err := scanHit(kind, rows, &bm)
		if err != nil {
			return nil, err
		}
		h.Score = -bm
		out = append(out, scored{hit: h, rid: rid})
	}
	return out, rows.Err()
}

// hitFilter is the condition on the hit table x (scope, liveness, session,
// exclusions) and its arguments.
func hitFilter(q imprint.TextQuery, src hitSource) (string, []any) {
	return hitFilterOn(scopeWhere("x"), q, src)
}

// keyedScopeWhere is scopeWhere("x") for rows looked up by key: the unary
// + keeps SQLite from reading the scope index (every row of the scope)
// instead of looking the keys up.
const keyedScopeWhere = `+x.tenant = ? AND +x.user_id = ? AND +x.agent = ?`

// hitFilterOn is hitFilter with the scope condition given.
func hitFilterOn(scope string, q imprint.TextQuery, src hitSource) (string, []any) {
	filter := scope + src.live
	fargs := scopeArgs(q.Scope)
	if q.SessionID != "" {
		filter += ` AND x.session_id = ?`
		fargs = append(fargs, q.SessionID)
	}
	w, wargs := workspaceWhere("x", q.Workspace, q.IncludeGlobal)
	filter, fargs = filter+w, append(fargs, wargs...)
	if len(q.ExcludeIDs) > 0 {
		filter += ` AND x.id NOT IN (` + placeholders(len(q.ExcludeIDs)) + `)`
		for _, id := range q.ExcludeIDs {
			fargs = append(fargs, id)
		}
	}
	return filter, fargs
}

// searchIndex returns up to want hits of one index, best first. With
// pruneAbove > 0, a word-index query of several terms of which one matches
// more than pruneAbove rows goes through searchPruned, which gives the
// same hits without scoring every matching row; otherwise it is one
// searchTop of the whole query.
func (db *DB) searchIndex(ctx context.Context, q imprint.TextQuery, src hitSource, table, expr string, terms []string, want, pruneAbove int) ([]scored, error) {
	filter, fargs := hitFilter(q, src)
	if pruneAbove > 0 && len(terms) > 1 {
		out, _, ok, err := db.searchPruned(ctx, q.Kind, src, table, expr, terms, filter, fargs, want, pruneAbove)
		if err != nil || ok {
			return out, err
		}
	}
	return searchTop(ctx, db.r, q.Kind, src, table, expr, filter, fargs, want)
}

// searchTop returns up to want rows of table matching match that pass the
// filter, best first. It ranks inside FTS first and reads the rows of only
// the best candidates; when the scope, session or exclusion filters leave
// too few, it widens the candidate window (4x per round) until the index
// has no more matches. Common words then cost one bm25 pass instead of a
// row lookup per match.
func searchTop(ctx context.Context, qr querier, kind imprint.Kind, src hitSource, table, match, filter string, fargs []any, want int) ([]scored, error) {
	for window := max(4*want, 64); ; window *= 4 {
		query := `SELECT ` + src.cols + `, f.score FROM (SELECT rowid AS rid, ` + rankOf(table) + ` AS score
			FROM ` + table + ` WHERE ` + table + ` MATCH ? ORDER BY score, rid LIMIT ?) f
			CROSS JOIN ` + src.table + ` x ON x.` + src.key + ` = f.rid WHERE ` + filter + ` ORDER BY f.score, f.rid LIMIT ?`
		rows, err := qr.QueryContext(ctx, query, append(append([]any{match, window}, fargs...), want)...)
		if err != nil {
			return nil, err
		}
		out, err := readHits(kind, rows)
		if err != nil {
			return nil, err
		}
		if len(out) >= want {
			return out, nil
		}
		var more int
		if err := qr.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT rowid FROM `+table+` WHERE `+table+
			` MATCH ? LIMIT ?)`, match, window+1).Scan(&more); err != nil {
			return nil, err
		}
		if more <= window {
			return out, nil // the window held every match
		}
	}
}

// rankOf is the bm25 call that ranks an index: message_words weighs its
// context columns below the message's own words.
func rankOf(table string) string {
	if table == "message_words" {
		return messageRank
	}
	return "bm25(" + table + ")"
}

// commonTermRows is the number of matching rows above which a term is
// common for searchPruned. Measured on 100k rows of real text: at 5,000
// the uncommon-word p95 was 4.1 ms, at 2,000 5.2 ms, at 1,200 6.7 ms and
// at 500 8.6 ms — scoring a few thousand rare-term rows exactly is cheaper
// than pruning with a looser bound.
const commonTermRows = 5000

// prunedSteps is how many common terms searchPruned scores one at a time
// before it scores the rows of all the terms left in one pass: each pass
// pays FTS5's idf set-up (a walk over every phrase's rows), so a query of
// many common words that nothing prunes costs at most a few of them more
// than the plain query.
const prunedSteps = 3

// bm25K1 is the k1 constant of FTS5's bm25 function.
const bm25K1 = 1.2

// termRows is a query term and how many rows of the index hold it, or
// at least hold it when not exact.
type termRows struct {
	term  string
	rows  int
	exact bool
}

// searchPruned is exact top-k pruning (MaxScore) of a word-index query of
// several terms, at least one of them common (in more than commonRows
// rows). bm25 costs a few microseconds per matching row, so a
// common term makes the plain query score tens of thousands of rows. A row's bm25 is a
// sum over the terms it holds, and a term's part is below idf*(k1+1)
// whatever its frequency and the row's length (with non-negative column
// weights). So the matching rows are scored in disjoint groups, and once
// the want-th best row so far (after the filter) beats the bound of every
// row not yet scored, no such row can enter the top want, and the rows so
// far are exactly the plain query's best. Of two terms, the groups are the
// rows holding both, then those holding only the rarer, then only the
// other. Of more, they are the rows holding a rare term (the rare terms
// together), then those holding the rarest common term and none of the
// terms before it, and so on; after prunedSteps common terms, the rows of
// all the terms left form one group. Each group is one bm25 pass over the
// full query's phrases restricted by AND or NOT; a NOT clause's phrases
// add exactly zero to a returned row's score, so the scores are those of
// the plain query, and scoring every group gives the plain query's hits.
// Terms are counted only as far as a bound needs. ok is false when every
// term is rare, where the plain query scores few rows anyway; unscored is
// how many groups were left unscored.
// All reads share one snapshot, so counts and scores agree.
func (db *DB) searchPruned(ctx context.Context, kind imprint.Kind, src hitSource, table, expr string, terms []string,
	filter string, fargs []any, want, commonRows int) (out []scored, unscored int, ok bool, err error) {
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, false, err
	}
	defer tx.Rollback()
	count := func(term string, limit int) (int, error) {
		var n int
		if limit <= 0 {
			err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE `+table+` MATCH ?`, term).Scan(&n)
			return n, err
		}
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT rowid FROM `+table+` WHERE `+table+
			` MATCH ? LIMIT ?)`, term, limit).Scan(&n)
		return n, err
	}
	// Each term's row count: exact for a rare term, a lower bound (which
	// bounds its idf from above) for a common one until counted. A query
	// of rare terms alone scores few rows: no pruning.
	all := make([]termRows, len(terms))
	var rare []string
	var common []*termRows
	for i, t := range terms {
		n, err := count(t, commonRows+1)
		if err != nil {
			return nil, 0, false, err
		}
		all[i] = termRows{term: t, rows: n, exact: n <= commonRows}
		if all[i].exact {
			rare = append(rare, t)
		} else {
			common = append(common, &all[i])
		}
	}
	if len(common) == 0 {
		return nil, 0, false, nil
	}
	var avg []byte
	if err := tx.QueryRowContext(ctx, `SELECT block FROM `+table+`_data WHERE id = 1`).Scan(&avg); err != nil {
		return nil, 0, false, err
	}
	total, n := uvarint(avg)
	if n == 0 {
		return nil, 0, false, nil
	}
	bound := func(t *termRows) float64 { return bm25IDF(int64(total), int64(t.rows)) * (bm25K1 + 1) }
	// theta is the want-th best score so far; none is -Inf.
	theta := func() float64 {
		if len(out) < want {
			return math.Inf(-1)
		}
		return out[want-1].hit.Score
	}
	above := func(score, b float64) bool { return score > b+1e-9*(1+b) }
	// below reports whether every row holding only t scores below
	// theta(), counting t's rows only as far as that needs: a term that
	// is in at least n rows has its bound at n.
	below := func(t *termRows) (bool, error) {
		th := theta()
		if above(th, bound(t)) {
			return true, nil
		}
		if t.exact {
			return false, nil
		}
		need := t.rows + sort.Search(int(total)-t.rows, func(i int) bool {
			return above(th, bm25IDF(int64(total), int64(t.rows+1+i))*(bm25K1+1))
		}) + 1
		if need > int(total) {
			return false, nil
		}
		c, err := count(t.term, need)
		if err != nil {
			return false, err
		}
		t.rows, t.exact = c, c < need
		return !t.exact, nil
	}
	// beats reports whether theta() is above the sum of the bounds of ts,
	// counting the terms exactly when that could help.
	beats := func(ts []*termRows) (bool, error) {
		sum := func(exactOnly bool) float64 {
			var b float64
			for _, t := range ts {
				if t.exact || !exactOnly {
					b += bound(t)
				}
			}
			return b
		}
		th := theta()
		if above(th, sum(false)) {
			return true, nil
		}
		if !above(th, sum(true)) {
			return false, nil
		}
		counted := false
		for _, t := range ts {
			if !t.exact {
				if t.rows, err = count(t.term, 0); err != nil {
					return false, err
				}
				t.exact, counted = true, true
			}
		}
		return counted && above(th, sum(false)), nil
	}
	run := func(match string) error {
		hits, err := searchTop(ctx, tx, kind, src, table, match, filter, fargs, want)
		if err == nil {
			out = bestOf(append(out, hits...), want)
		}
		return err
	}
	if len(terms) == 2 {
		// FTS5 walks an AND from its rarer side; each group here has
		// two phrases, where a NOT clause over the other term would add
		// two more walks of the term's rows.
		x, y := &all[0], &all[1]
		if err := run(x.term + " AND " + y.term); err != nil {
			return nil, 0, false, err
		}
		// A row left holds one term: its bound is that term's. Both
		// are counted as far as theta needs: a term that fails is
		// counted exactly, and is the rarer.
		okx, err := below(x)
		if err != nil {
			return nil, 0, false, err
		}
		oky, err := below(y)
		if err != nil || okx && oky {
			return out, 2, err == nil, err
		}
		if !x.exact && !y.exact {
			// Too few rows hold both for a theta: count exactly to
			// tell the rarer.
			for _, t := range []*termRows{x, y} {
				if t.rows, err = count(t.term, 0); err != nil {
					return nil, 0, false, err
				}
				t.exact = true
			}
		}
		if x.rows > y.rows || x.rows == y.rows && !x.exact {
			x, y = y, x // x is the rarer
		}
		if err := run(x.term + " NOT " + y.term); err != nil {
			return nil, 0, false, err
		}
		if ok, err := below(y); err != nil || ok {
			return out, 1, ok, err
		}
		if err := run(y.term + " NOT " + x.term); err != nil {
			return nil, 0, false, err
		}
		return out, 0, true, nil
	}
	var done []string // the terms of the groups scored
	score := func(group []string, later []*termRows) error {
		match := "(" + expr + ")"
		if len(later) > 0 {
			ls := make([]string, len(later))
			for i, t := range later {
				ls[i] = t.term
			}
			match = "(" + match + " NOT ((" + strings.Join(ls, " OR ") + ") NOT (" + strings.Join(group, " OR ") + ")))"
		}
		if len(done) > 0 {
			match += " NOT (" + strings.Join(done, " OR ") + ")"
		}
		done = append(done, group...)
		return run(match)
	}
	if len(rare) > 0 {
		if err := score(rare, common); err != nil {
			return nil, 0, false, err
		}
		if ok, err := beats(common); err != nil || ok {
			return out, len(common), ok, err
		}
	}
	for _, t := range common {
		if !t.exact {
			if t.rows, err = count(t.term, 0); err != nil {
				return nil, 0, false, err
			}
			t.exact = true
		}
	}
	sort.SliceStable(common, func(i, j int) bool { return common[i].rows < common[j].rows })
	for i, t := range common {
		if i > 0 || len(rare) > 0 {
			if ok, err := beats(common[i:]); err != nil || ok {
				return out, len(common) - i, ok, err
			}
		}
		if i == prunedSteps {
			group := make([]string, 0, len(common)-i)
			for _, t := range common[i:] {
				group = append(group, t.term)
			}
			if err := score(group, nil); err != nil {
				return nil, 0, false, err
			}
			return out, 0, true, nil
		}
		if err := score([]string{t.term}, common[i+1:]); err != nil {
			return nil, 0, false, err
		}
	}
	return out, 0, true, nil
}

// bestOf returns the best want of hits, ties by rowid.
func bestOf(hits []scored, want int) []scored {
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].hit.Score != hits[j].hit.Score {
			return hits[i].hit.Score > hits[j].hit.Score
		}
		return hits[i].rid < hits[j].rid
	})
	return hits[:min(want, len(hits))]
}

// bm25IDF is FTS5's idf of a phrase matching hits of total rows.
func bm25IDF(total, hits int64) float64 {
	idf := math.Log((float64(total-hits) + 0.5) / (float64(hits) + 0.5))
	if idf <= 0 {
		idf = 1e-6
	}
	return idf
}

// uvarint decodes an SQLite varint (big-endian, 7 bits a byte, the ninth
// byte whole), returning the value and its length, 0 when b is too short.
func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 8 && i < len(b); i++ {
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}

// SearchText finds records of q.Kind matching any term of q.Text within the
// scope, ranked by BM25 (reported as -bm25, higher is better), best first.
// Hits of the word and trigram indexes are merged by summing scores. A
// query with no usable term returns no hits. ErrInvalid for an empty scope
// or unknown kind.
func (db *DB) SearchText(ctx context.Context, q imprint.TextQuery) ([]imprint.Hit, error) {
	return db.searchText(ctx, q, commonTermRows)
}

// TextPrefixStable reports whether SearchText(q) with a smaller limit
// returns exactly the first hits of q's (search.PrefixStore): true for a
// memory or trace query whose text reads one keyword index (not both CJK
// and other words). Such a query reads the index the limit deep, each
// read (searchTop, searchPruned) returns the first rows of the filtered
// rows in one order (score, then rowid) whatever the limit, and the hits
// are sorted in that order. A message query's context scores
// (messageContext) and the two-index sum depend on the depth read.
func (db *DB) TextPrefixStable(q imprint.TextQuery) bool {
	if q.Kind != imprint.KindMemory && q.Kind != imprint.KindTrace {
		return false
	}
	fq := buildQuery(q.Text)
	return fq.words == "" || fq.trigram == ""
}

// searchText is SearchText with searchPruned's threshold of a common term;
// pruneAbove 0 always runs the plain bm25 query.
func (db *DB) searchText(ctx context.Context, q imprint.TextQuery, pruneAbove int) ([]imprint.Hit, error) {
	if err := validScope(q.Scope); err != nil {
		return nil, err
	}
	src, err := sourceOf(q.Kind)
	if err != nil {
		return nil, err
	}
	limit := imprint.SearchLimit(q.Limit)
	fq := buildQuery(q.Text)
	if fq.empty() {
		return []imprint.Hit{}, nil
	}
	// The quoted terms of words hold no space, so splitting on the
	// operator gives them back.
	words, terms := fq.words, strings.Split(fq.words, " OR ")
	if q.Kind == imprint.KindMessage && words != "" {
		// A message's speaker is scored apart (messageContext).
		words = messageOwnColumns + "(" + words + ")"
		for i, t := range terms {
			terms[i] = messageOwnColumns + t
		}
	}
	// Each index is read twice the limit deep, so that a record found by
	// both has its two scores summed, and the context of a message hit
	// (messageContext) has its neighbours. A memory or trace query that
	// reads one index (no CJK text, or only CJK text) needs only the
	// limit: each index returns its best rows in score order, ties by
	// rowid, the order of the final sort.
	depth := 2 * limit
	if q.Kind != imprint.KindMessage && (fq.trigram == "" || fq.words == "") {
		depth = limit
	}
	merged := map[int64]*scored{}
	for _, part := range []struct {
		table, expr string
		terms       []string
	}{
		{string(q.Kind) + "_fts", fq.trigram, nil}, {string(q.Kind) + "_words", words, terms},
	} {
		if part.expr == "" {
			continue
		}
		hits, err := db.searchIndex(ctx, q, src, part.table, part.expr, part.terms, depth, pruneAbove)
		if err != nil {
			return nil, dbErr("search text", err)
		}
		for _, h := range hits {
			if s, ok := merged[h.rid]; ok {
				s.hit.Score += h.hit.Score
				continue
			}
			merged[h.rid] = &scored{hit: h.hit, rid: h.rid}
		}
	}
	all := make([]*scored, 0, len(merged))
	for _, s := range merged {
		all = append(all, s)
	}
	if q.Kind == imprint.KindMessage {
		if all, err = db.messageContext(ctx, q, src, all); err != nil {
			return nil, dbErr("search text", err)
		}
		if len(all) < limit && fq.words != "" {
			if all, err = db.messagesBySpeaker(ctx, q, src, fq.words, limit, all); err != nil {
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

// messageContext scores what the keyword index leaves out of a message:
// who said it and the turns around it. The next message of a hit's
// session, the reply, gains weightReply of the hit's score, the previous
// one weightAnswered (of the score the words gave, not the speaker), and a
// neighbour that did not match itself becomes a hit with that score when
// the query's filters allow it; then a hit whose speaker the query names
// gains weightSpeaker of its score. The speakers and neighbours are read in
// one query on the session index.
func (db *DB) messageContext(ctx context.Context, q imprint.TextQuery, src hitSource, hits []*scored) ([]*scored, error) {
	if len(hits) == 0 {
		return hits, nil
	}
	named := keyword.QueryNames(q.Text)
	cands := make([][2]any, len(hits))
	for i, h := range hits {
		session := ""
		if h.hit.SessionID != nil {
			session = *h.hit.SessionID
		}
		cands[i] = [2]any{h.rid, session}
	}
	list, err := json.Marshal(cands)
	if err != nil {
		return nil, err
	}
	st, err := db.readStmt(neighboursSQL)
	if err != nil {
		return nil, err
	}
	args := append(append([]any{string(list)}, scopeArgs(q.Scope)...), scopeArgs(q.Scope)...)
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	byRID := make(map[int64]*scored, len(hits))
	for _, h := range hits {
		byRID[h.rid] = h
	}
	boost := map[int64]float64{}
	speakers := map[int64]string{}
	for rows.Next() {
		var rid int64
		var speaker sql.NullString
		var next, prev sql.NullInt64
		if err := rows.Scan(&rid, &speaker, &next, &prev); err != nil {
			rows.Close()
			return nil, err
		}
		speakers[rid] = speaker.String
		if next.Valid {
			boost[next.Int64] += weightReply * byRID[rid].hit.Score
		}
		if prev.Valid {
			boost[prev.Int64] += weightAnswered * byRID[rid].hit.Score
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var missing []any
	for rid, add := range boost {
		if h, ok := byRID[rid]; ok {
			h.hit.Score += add
			continue
		}
		missing = append(missing, rid)
	}
	if len(missing) > 0 {
		keys, err := json.Marshal(missing)
		if err != nil {
			return nil, err
		}
		var rows *sql.Rows
		if q.SessionID == "" && q.Workspace == "" && !q.IncludeGlobal && len(q.ExcludeIDs) == 0 {
			st, err := db.readStmt(neighbourHitsSQL)
			if err != nil {
				return nil, err
			}
			rows, err = st.QueryContext(ctx, append([]any{string(keys)}, scopeArgs(q.Scope)...)...)
		} else {
			filter, fargs := hitFilterOn(keyedScopeWhere, q, src)
			rows, err = db.r.QueryContext(ctx, neighbourHitsCols+filter, append([]any{string(keys)}, fargs...)...)
		}
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

// neighboursSQL reads, for each candidate message (a JSON array of [seq,
// session id] pairs), its speaker and the seqs of the next and previous
// messages of its session, on the session index. One statement for any
// number of candidates, prepared once.
var neighboursSQL = rsql(`WITH c(seq, session) AS (SELECT value ->> 0, value ->> 1 FROM json_each(?))
	SELECT c.seq, (SELECT speaker FROM messages WHERE seq = c.seq),
	(SELECT m.seq FROM messages m WHERE m.tenant = ? AND m.user_id = ? AND m.agent = ?
		AND m.session_id = c.session AND m.seq > c.seq ORDER BY m.seq LIMIT 1),
	(SELECT m.seq FROM messages m WHERE m.tenant = ? AND m.user_id = ? AND m.agent = ?
		AND m.session_id = c.session AND m.seq < c.seq ORDER BY m.seq DESC LIMIT 1) FROM c`)

// neighbourHitsCols reads message hits (and their speakers) by seq, the
// seqs a JSON array; the hit filter follows. neighbourHitsSQL is it with
// the scope alone, the common case, prepared once.
var (
	neighbourHitsCols = `SELECT ` + hitSources[imprint.KindMessage].cols + `, x.speaker FROM messages x
	WHERE x.seq IN (SELECT value FROM json_each(?)) AND `
	neighbourHitsSQL = rsql(neighbourHitsCols + keyedScopeWhere)
)

// messageOwnColumns restricts a message_words query to the message's own
// words and dates.
const messageOwnColumns = "{text date} : "

// messagesBySpeaker adds, to a message search that found fewer than limit
// hits by the messages' words, the messages of a speaker the query names
// ("Caroline" alone), scored weightSpeaker times their bm25 on the speaker
// column, so a message that says the words ranks first.
func (db *DB) messagesBySpeaker(ctx context.Context, q imprint.TextQuery, src hitSource, words string, limit int, hits []*scored) ([]*scored, error) {
	found, err := db.searchIndex(ctx, q, src, "message_words", "{who} : ("+words+")", nil, limit, 0)
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

// SearchVector finds the records of q.Kind whose vector made by q.Embedder
// is closest to q.Vector by cosine, within the scope (and session), best
// first. Superseded memories are never candidates; a trace scores the better
// of its summary and action vectors. A query vector of another dimension
// matches nothing. ErrInvalid for an empty scope, unknown kind or missing
// embedder.
func (db *DB) SearchVector(ctx context.Context, q imprint.VectorQuery) ([]imprint.Hit, error) {
	if err := validScope(q.Scope); err != nil {
		return nil, err
	}
	src, err := sourceOf(q.Kind)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(q.Embedder) == "" {
		return nil, imprint.Invalidf("embedder is required")
	}
	if len(q.Vector) == 0 {
		return []imprint.Hit{}, nil
	}
	x, err := db.index(ctx, vecKey{q.Kind, q.Embedder})
	if err != nil {
		return nil, dbErr("search vector", err)
	}
	cands := x.topK(q, imprint.SearchLimit(q.Limit))
	if len(cands) == 0 {
		return []imprint.Hit{}, nil
	}
	args := make([]any, 0, len(cands)+3)
	for _, c := range cands {
		args = append(args, c.rid)
	}
	args = append(args, scopeArgs(q.Scope)...)
	rows, err := db.r.QueryContext(ctx, `SELECT `+src.cols+` FROM `+src.table+` x WHERE x.`+src.key+` IN (`+
		placeholders(len(cands))+`) AND `+keyedScopeWhere+src.live, args...)
	if err != nil {
		return nil, dbErr("search vector", err)
	}
	defer rows.Close()
	byRID := map[int64]imprint.Hit{}
	for rows.Next() {
		rid, h, err := scanHit(q.Kind, rows)
		if err != nil {
			return nil, dbErr("search vector", err)
		}
		byRID[rid] = h
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("search vector", err)
	}
	out := make([]imprint.Hit, 0, len(cands))
	for _, c := range cands {
		h, ok := byRID[c.rid]
		if !ok {
			continue // changed since the scan
		}
		h.Score = c.score
		out = append(out, h)
	}
	return out, nil
}
