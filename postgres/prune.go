package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
)

// Keyword search of memories' word index in one pass over the records of
// the query's rare terms. At 100k memories a search's time was the records
// it read: each term's count and each term's GIN scan (and the scan of the
// index's pending list) ran once to count and again to rank. Here the
// records holding a rare term are read once, with one GIN scan of all the
// rare terms: the same statement tells which terms each holds, counting
// the rare terms' records exactly (every scope), and returns each passing
// record's f per term (wordFreqs) and length, so the store computes the
// idfs from the counts and the bm25 scores itself (bm25Score, the
// arithmetic of wordScore's SQL). Common terms (the planner's estimate
// above termLimits.common, confirmed by counting their live records up to
// one more) are not counted further: their records are read only when the
// bound of a term's part (idf·(k1+1)) says they could rank.

// termLimits are the record counts of searchIndex: a table of exactBelow
// records or more is large, and in a large table a term of more than
// common records is common.
type termLimits struct {
	exactBelow, common int64
}

// limits returns the DB's termLimits (tests lower them).
func (db *DB) limits() termLimits {
	if db.termLimits.common > 0 {
		return db.termLimits
	}
	return termLimits{exactBelow: exactCountBelow, common: pruneAbove}
}

// liveWhere returns the WHERE clause of src's live records (unaliased)
// and cond.
func liveWhere(src hitSource, cond string) string {
	live := strings.TrimPrefix(strings.ReplaceAll(src.live, "x.", ""), " AND ")
	switch {
	case live == "":
		return " WHERE " + cond
	case cond == "":
		return " WHERE " + live
	}
	return " WHERE " + live + " AND " + cond
}

// termPlan returns the tsquery of each word term and, in a large table,
// the planner's estimate of each term's live records, in one round trip.
func (db *DB) termPlan(ctx context.Context, src hitSource, col string, words []string, big bool) (tqs []string, est []int64, err error) {
	var a args
	var sel []string
	for _, w := range words {
		sel = append(sel, termQuery(&a, w)+`::text`)
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT `+strings.Join(sel, ", "), a...)
	if big {
		// Literals, so the estimate is of these terms (the tsquery
		// function is folded at planning).
		for _, w := range words {
			b.Queue(`EXPLAIN (FORMAT JSON) SELECT 1 FROM ` + src.table + liveWhere(src, col+` @@ phraseto_tsquery('imprint', `+quoteLiteral(w)+`)`))
		}
	}
	br := db.pool.SendBatch(ctx, b)
	defer br.Close()
	tqs = make([]string, len(words))
	dst := make([]any, len(words))
	for i := range tqs {
		dst[i] = &tqs[i]
	}
	if err := br.QueryRow().Scan(dst...); err != nil {
		return nil, nil, err
	}
	if big {
		for range words {
			var plan string
			if err := br.QueryRow().Scan(&plan); err != nil {
				return nil, nil, err
			}
			n, err := planRows(plan)
			if err != nil {
				return nil, nil, err
			}
			est = append(est, n)
		}
	}
	return tqs, est, br.Close()
}

// checkCommon sets common[i] for each term whose estimate (est) is above
// countCap-1 records and that the live records of src, counted up to
// countCap, confirm. The estimate multiplies the selectivities of "live"
// and "holds the term" as if they were independent: a term of many
// memories superseded or forgotten since (an updated fact) is estimated
// common while few live ones hold it, and an uncounted common term's idf
// would be the estimate's, ranking its one live memory below those of far
// more frequent words (SQLite's FTS5 counts only live records). The
// counts of all such terms are one round trip, each reading at most
// countCap live records.
func (db *DB) checkCommon(ctx context.Context, src hitSource, col string, tqs []string, est []int64, countCap int64, common []bool) error {
	var at []int
	var a args
	b := &pgx.Batch{}
	for i, n := range est {
		if n < countCap {
			continue
		}
		at = append(at, i)
		a = a[:0]
		q := `SELECT count(*) FROM (SELECT 1 FROM ` + src.table + liveWhere(src, col+` @@ `+a.add(tqs[i])+`::tsquery`) +
			` LIMIT ` + a.add(countCap) + `) s`
		b.Queue(q, append([]any(nil), a...)...)
	}
	if len(at) == 0 {
		return nil
	}
	br := db.pool.SendBatch(ctx, b)
	defer br.Close()
	for _, i := range at {
		var n int64
		if err := br.QueryRow().Scan(&n); err != nil {
			return fmt.Errorf("count common term: %w", err)
		}
		common[i] = n >= countCap
	}
	return br.Close()
}

// planRows is the row estimate of an EXPLAIN (FORMAT JSON)'s top node.
func planRows(plan string) (int64, error) {
	var out []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		}
	}
	if err := json.Unmarshal([]byte(plan), &out); err != nil || len(out) == 0 {
		return 0, fmt.Errorf("read plan %q: %v", plan, err)
	}
	return int64(out[0].Plan.Rows), nil
}

// rareRows are the records holding a rare term and passing the query's
// filters, as readRare reads them: element j of each slice is record j's.
type rareRows struct {
	rid  []int64
	ntok []int32
	f    [][]float64 // each word term's f
}

// ranked is a record's score.
type ranked struct {
	rid   int64
	score float64
}

// searchMemories is searchIndex of the word index (column col) for
// memories: the want best hits of the word terms, ranking in one pass the
// records of the rare terms (of every term when the table is small) and
// reading the records holding only common terms only when they could rank.
// The hits are those rankIndex gives ranking every match with the same
// idfs (TestSearchMemoriesExact). pruned reports whether the records of
// common terms were left unread.
func (db *DB) searchMemories(ctx context.Context, q imprint.TextQuery, src hitSource, col string, words []string, want int) (out []scored, st termStats, pruned bool, err error) {
	if len(words) == 0 {
		return nil, st, false, nil
	}
	lim := db.limits()
	tot, err := db.totals(ctx, q.Kind, src)
	if err != nil {
		return nil, st, false, err
	}
	big := tot.at >= lim.exactBelow
	db.bigTables.Store(src.table, big)
	tqs, est, err := db.termPlan(ctx, src, col, words, big)
	if err != nil {
		return nil, st, false, err
	}
	countCap := lim.common + 1
	hits := make([]int64, len(words))
	common := make([]bool, len(words))
	if big {
		if err := db.checkCommon(ctx, src, col, tqs, est, countCap, common); err != nil {
			return nil, st, false, err
		}
	}
	nRare := 0
	for i := range words {
		if common[i] {
			hits[i] = max(est[i], countCap)
		} else {
			nRare++
		}
	}
	var rare rareRows
	if nRare > 0 {
		counts, rows, complete, err := db.readRare(ctx, q, src, col, tqs, common, int64(nRare)*countCap, big)
		if err != nil {
			return nil, st, false, err
		}
		if !complete {
			// A term the estimate called rare is not: count and
			// rank as searchIndex does.
			if st, err = db.idfs(ctx, src, col, words, nil, tot); err != nil {
				return nil, st, false, err
			}
			out, err := db.searchWith(ctx, q, src, col, words, nil, st, want)
			return out, st, false, err
		}
		rare = rows
		for i, n := range counts {
			if common[i] {
				continue
			}
			hits[i] = n
			if big && n >= countCap {
				// Counted as far as a large table's terms are:
				// a term this common counts the estimate.
				hits[i] = max(est[i], countCap)
			}
		}
	}
	st = termStats{tsqueries: tqs, wordHits: hits, triHits: []int64{}, triIDF: []float64{}, wordIDF: make([]float64, len(words)), totals: tot}
	bound := 0.0
	for i, n := range hits {
		st.wordIDF[i] = bm25IDF(tot.words.rows, n)
		if common[i] {
			bound += st.wordIDF[i] * (bm25K1 + 1)
		}
	}
	if nRare > 0 {
		best := scoreRare(rare, st.wordIDF, tot.words.avgdl(), want)
		if bound == 0 || len(best) == want && best[want-1].score > bound*(1+1e-9) {
			out, err := db.readHits(ctx, q.Kind, src, best)
			return out, st, bound > 0, err
		}
	}
	out, err = db.rankIndex(ctx, q, src, col, words, nil, st, func(int64) bool { return true }, want)
	return out, st, false, err
}

// readRare reads the live records of every scope holding a word term not
// common, at most limit of them when limited (complete false when there
// were more), and returns how many hold each term (exact for the terms not
// common) and, of those passing the query's filters, their f per term and
// length. The server sends them as one row of arrays: decoding a row per
// record cost the client more than the server's whole search.
func (db *DB) readRare(ctx context.Context, q imprint.TextQuery, src hitSource, col string, tqs []string,
	common []bool, limit int64, limited bool) (counts []int64, rare rareRows, complete bool, err error) {
	occ, err := db.occurrences(ctx, q.Kind, col)
	if err != nil {
		return nil, rare, false, err
	}
	var a args
	filter := hitFilter(&a, q.Scope, q.SessionID, q.Workspace, q.IncludeGlobal, q.ExcludeIDs, src)
	// A one-word term's f is its number of positions, which ts_rank
	// tells (occurrences) for a fraction of the cost of wordFreqs' lateral
	// reading of the record's positions; a phrase's is wordFreqs'.
	byRank := make([]bool, len(tqs))
	var phrases []string
	for i, tq := range tqs {
		if ls, ok := phraseLexemes(tq); ok && len(ls) == 1 && occ != nil {
			byRank[i] = true
		} else {
			phrases = append(phrases, tq)
		}
	}
	fs, joins := wordFreqs(&a, q.Kind, col, phrases)
	inner := []string{`x.rid`, `(` + filter + `) AS ok`, `x.ntok`}
	outer := []string{`count(*)`}
	var aggs, anyWord []string
	for i, tq := range tqs {
		t := a.add(tq) + `::tsquery`
		n := strconv.Itoa(i)
		f := `ts_rank('{1, 1, 1, 1}', x.` + col + `, ` + t + `)`
		if !byRank[i] {
			f, fs = fs[0], fs[1:]
		}
		inner = append(inner, `x.`+col+` @@ `+t+` AS m`+n, f+` AS f`+n)
		outer = append(outer, `count(*) FILTER (WHERE s.m`+n+`)`)
		aggs = append(aggs, `array_agg(s.f`+n+`) FILTER (WHERE s.ok)`)
		if !common[i] {
			anyWord = append(anyWord, t)
		}
	}
	outer = append(append(outer, `array_agg(s.rid) FILTER (WHERE s.ok)`, `array_agg(s.ntok) FILTER (WHERE s.ok)`), aggs...)
	// One GIN scan for all the rare words: each scan reads the index's
	// whole pending list.
	where := `x.` + col + ` @@ (` + strings.Join(anyWord, ` || `) + `)`
	if live := strings.TrimPrefix(src.live, " AND "); live != "" {
		where = live + " AND " + where
	}
	// OFFSET 0 keeps the subquery whole, so each record's filter and
	// flags are computed once.
	tail := ` OFFSET 0`
	if limited {
		tail = ` LIMIT ` + a.add(limit+1)
	}
	query := `SELECT ` + strings.Join(outer, ", ") + ` FROM (SELECT ` + strings.Join(inner, ", ") + ` FROM ` + src.table +
		` x` + joins + ` WHERE ` + where + tail + `) s`
	counts = make([]int64, len(tqs))
	var rows int64
	rare.f = make([][]float64, len(tqs))
	ranks := make([][]float32, len(tqs))
	dst := []any{&rows}
	for i := range counts {
		dst = append(dst, &counts[i])
	}
	dst = append(dst, &rare.rid, &rare.ntok)
	for i := range rare.f {
		if byRank[i] {
			dst = append(dst, &ranks[i])
		} else {
			dst = append(dst, &rare.f[i])
		}
	}
	if err := db.pool.QueryRow(ctx, query, a...).Scan(dst...); err != nil {
		return nil, rare, false, err
	}
	if limited && rows > limit {
		return nil, rare, false, nil
	}
	for i, rs := range ranks {
		if !byRank[i] {
			continue
		}
		rare.f[i] = make([]float64, len(rs))
		for j, r := range rs {
			n, ok := occ[r]
			if !ok {
				return nil, rare, false, nil // not a rank of one lexeme's positions: rank in SQL
			}
			rare.f[i][j] = n
		}
	}
	for _, f := range rare.f {
		if len(f) != len(rare.rid) {
			return nil, rare, false, fmt.Errorf("read rare terms: %d frequencies of %d records", len(f), len(rare.rid))
		}
	}
	return counts, rare, true, nil
}

// maxPositions is how many positions a tsvector keeps of one lexeme.
const maxPositions = 256

// occurrences maps ts_rank('{1, 1, 1, 1}', v, 'l') of a tsvector v holding
// lexeme l at n positions (0 to maxPositions) to wordFreqs' f of a word
// term in column col of kind, n times the column's weight, as the server
// computes both: a one-word query's ts_rank is a sum over the lexeme's
// positions and nothing else, distinct for each n. Nil (no mapping) when
// the column is not one document column (bm25Columns) or two counts rank
// alike. It is read from the server once per DB.
func (db *DB) occurrences(ctx context.Context, kind imprint.Kind, col string) (map[float32]float64, error) {
	cols := bm25Columns[kind][col]
	if len(cols) != 1 || cols[0].tsv != "x."+col {
		return nil, nil
	}
	db.occ.mu.Lock()
	defer db.occ.mu.Unlock()
	if db.occ.ranks == nil {
		rows, err := db.pool.Query(ctx, `SELECT n, ts_rank('{1, 1, 1, 1}', CASE WHEN n = 0 THEN 'b:1'::tsvector
			ELSE ('a:' || (SELECT string_agg(i::text, ',') FROM generate_series(1, n) i))::tsvector END, 'a'::tsquery)
			FROM generate_series(0, $1::int) n`, maxPositions)
		if err != nil {
			return nil, err
		}
		ranks := map[float32]int{}
		for rows.Next() {
			var n int
			var r float32
			if err := rows.Scan(&n, &r); err != nil {
				rows.Close()
				return nil, err
			}
			if _, dup := ranks[r]; dup {
				ranks[r] = -1
				continue
			}
			ranks[r] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		db.occ.ranks = ranks
	}
	out := make(map[float32]float64, len(db.occ.ranks))
	for r, n := range db.occ.ranks {
		if n < 0 {
			return nil, nil
		}
		// wordFreqs' SQL: (count)::float8 * weight::float8.
		out[r] = float64(n) * cols[0].weight
	}
	return out, nil
}

// scoreRare scores the records (bm25Score) and returns the want best, ties
// by rid.
func scoreRare(r rareRows, idfs []float64, avgdl float64, want int) []ranked {
	if want <= 0 {
		return nil
	}
	better := func(a, b ranked) bool { return a.score > b.score || a.score == b.score && a.rid < b.rid }
	best := make([]ranked, 0, want+1) // best first
	fs := make([]float64, len(idfs))
	for j, rid := range r.rid {
		for i := range fs {
			fs[i] = r.f[i][j]
		}
		c := ranked{rid: rid, score: bm25Score(fs, idfs, float64(r.ntok[j]), avgdl)}
		if len(best) == want && !better(c, best[want-1]) {
			continue
		}
		k := sort.Search(len(best), func(k int) bool { return better(c, best[k]) })
		best = append(best, ranked{})
		copy(best[k+1:], best[k:])
		best[k] = c
		best = best[:min(len(best), want)]
	}
	return best
}

// readHits reads the hits of the ranked records, in their order.
func (db *DB) readHits(ctx context.Context, kind imprint.Kind, src hitSource, best []ranked) ([]scored, error) {
	if len(best) == 0 {
		return nil, nil
	}
	rids := make([]int64, len(best))
	at := make(map[int64]int, len(best))
	for i, c := range best {
		rids[i], at[c.rid] = c.rid, i
	}
	rows, err := db.pool.Query(ctx, `SELECT `+src.cols+` FROM `+src.table+` x WHERE x.`+src.key+` = ANY($1::bigint[])`, rids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]scored, len(best))
	for rows.Next() {
		rid, h, err := scanHit(kind, rows)
		if err != nil {
			return nil, err
		}
		h.Score = best[at[rid]].score
		out[at[rid]] = scored{hit: h, rid: rid}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// A record deleted since it was ranked is left out.
	kept := out[:0]
	for _, s := range out {
		if s.hit.ID != "" {
			kept = append(kept, s)
		}
	}
	return kept, nil
}
