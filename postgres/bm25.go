package postgres

import (
	"context"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"modernc.org/libc"

	imprint "github.com/imprint-dev/imprint"
)

// Keyword scores are those of SQLite's store: FTS5's bm25 (k1 1.2, b
// 0.75) over the same index documents. A record's score is the sum over
// the query's terms, in query order, of
//
//	idf · (f·(k1+1)) / (f + k1·((1-b) + b·D/avgdl))
//
// computed in the same order as FTS5's C code, so that equal inputs give
// the same double. f is the term's weighted number of occurrences (a phrase
// counts where its words follow each other; a message's own words weigh
// weightText, its dates weightDate, its speaker weightWho), D the record's
// document length in tokens as unicode61 counts them (the ntok column of
// migration 0007, every column of a message's document together), avgdl
// the index's total tokens over its records, and idf FTS5's, over the
// records the index holds (bm25IDF). The CJK runs are FTS5's trigram index:
// f is how often the phrase occurs (overlapping), D the run text's
// trigrams. As on SQLite the two indexes are ranked apart and a record
// found by both sums its two scores (SearchText).
//
// A term's part is below idf·(k1+1)·w, w the largest column weight the
// query reads (1: weightDate is below weightText), the bound searchIndex
// prunes with.

// Column weights of a message's document, as SQLite's store weighs its
// message_words columns (sqlite/messagedoc.go).
const (
	weightText = 1.0
	weightDate = 0.5
	weightWho  = 1.0
)

// bm25Column is one column of an FTS5 document as a record keeps it: the
// tsvector holding that column's positions alone and the column's weight.
type bm25Column struct {
	tsv    string
	weight float64
}

// bm25Columns are, by kind and keyword column searched, the columns a
// term's occurrences are counted in. A message's words column holds its
// own words at weight A and its dates at weight B (message.go).
var bm25Columns = map[imprint.Kind]map[string][]bm25Column{
	imprint.KindMemory: {"words": {{"x.words", 1}}},
	imprint.KindTrace:  {"words": {{"x.words", 1}}},
	imprint.KindMessage: {
		"words": {{"ts_filter(x.words, '{a}')", weightText}, {"ts_filter(x.words, '{b}')", weightDate}},
		"who":   {{"x.who", weightWho}},
	},
}

// indexTotals are how many records one keyword index holds and how many
// tokens they hold together, as FTS5 counts them (for its avgdl and idf).
type indexTotals struct {
	rows, tokens int64
}

// avgdl is FTS5's average document length.
func (t indexTotals) avgdl() float64 {
	if t.rows == 0 {
		return 1
	}
	return float64(t.tokens) / float64(t.rows)
}

// kindTotals are the totals of a kind's word and trigram indexes, and the
// table's record count (the planner's estimate) when they were counted.
type kindTotals struct {
	words, tri indexTotals
	at         int64
	// mods is the table's rows inserted, updated and deleted so far (the
	// server's statistics, every node's writes), when counted.
	mods    int64
	counted time.Time
}

// totalsDrift is the change in a large table's record count, or the rows
// written since (inserted, updated — a memory forgotten or superseded —
// or deleted) as a share of it, after which its totals are counted again.
const totalsDrift = 0.05

// totalsMaxAge bounds how long a large table's totals are kept whatever
// the statistics say (they may be off, track_counts, or reset).
const totalsMaxAge = time.Minute

// inWordIndex is the condition on a record of kind (no alias) for it to be
// a row of SQLite's word index: every message is, a trace or memory with
// words (sqlite/fts.go).
func inWordIndex(kind imprint.Kind) string {
	if kind == imprint.KindMessage {
		return "true"
	}
	return "ntok > 0"
}

// totals returns the totals of the kind's two indexes over its live
// records of every scope, as FTS5 keeps them, in one statement: counted
// when the table is small (below exactCountBelow records, by the
// planner's count), else kept from the last count until the planner's
// record count drifts by totalsDrift, rows written since reach that share
// of it, or totalsMaxAge has passed.
func (db *DB) totals(ctx context.Context, kind imprint.Kind, src hitSource) (kindTotals, error) {
	live := strings.TrimPrefix(strings.ReplaceAll(src.live, "x.", ""), " AND ")
	if live != "" {
		live += " AND "
	}
	in := inWordIndex(kind)
	// The aggregates' condition on c is a one-time filter: a large
	// table's rows are not read.
	count := func(big bool) string {
		cond := `c.reltuples < ` + strconv.Itoa(exactCountBelow)
		if big {
			cond = "true"
		}
		return `SELECT c.reltuples::bigint, pg_stat_get_tuples_inserted(c.oid) + pg_stat_get_tuples_updated(c.oid) +
			pg_stat_get_tuples_deleted(c.oid), t.* FROM pg_class c CROSS JOIN LATERAL (SELECT COUNT(*) FILTER (WHERE ` + in + `),
			COALESCE(SUM(ntok) FILTER (WHERE ` + in + `), 0), COUNT(*) FILTER (WHERE cjk <> ''),
			COALESCE(SUM(char_length(cjk) - 2) FILTER (WHERE cjk <> ''), 0)
			FROM ` + src.table + ` WHERE ` + live + cond + `) t WHERE c.oid = '` + src.table + `'::regclass`
	}
	var t kindTotals
	read := func(big bool) error {
		return db.pool.QueryRow(ctx, count(big)).Scan(&t.at, &t.mods, &t.words.rows, &t.words.tokens, &t.tri.rows, &t.tri.tokens)
	}
	if err := read(false); err != nil || t.at < exactCountBelow {
		return t, err
	}
	if v, ok := db.bm25Totals.Load(src.table); ok {
		kept := v.(kindTotals)
		limit := totalsDrift * float64(max(kept.at, 1))
		if math.Abs(float64(t.at-kept.at)) <= limit && math.Abs(float64(t.mods-kept.mods)) <= limit &&
			time.Since(kept.counted) < totalsMaxAge {
			return kept, nil
		}
	}
	if err := read(true); err != nil {
		return kindTotals{}, err
	}
	t.counted = time.Now()
	db.bm25Totals.Store(src.table, t)
	return t, nil
}

// ftsLog is the natural logarithm of SQLite's build (musl's, which
// modernc.org/sqlite runs): Go's math.Log differs from it in the last bit
// for about one idf in fourteen, and the scores would too.
func ftsLog(x float64) float64 { return libc.Xlog(nil, x) }

// bm25Consts are FTS5's constants as its C code computes them at run
// time (k1+1 is a sum of doubles there, not the decimal 2.2).
var bm25Consts = func() (c struct{ k1, b, k1p1, omb float64 }) {
	k1, b := bm25K1, bm25B
	c.k1, c.b = k1, b
	c.k1p1 = k1 + 1.0
	c.omb = 1 - b
	return c
}()

// bm25Term is the SQL of one term's part of a score, given f, the SQL of
// its weighted occurrences (float8), and k, that of the record's length
// normalisation.
func bm25Term(a *args, idf float64, f, k string) string {
	return `(` + a.add(idf) + `::float8 * ((` + f + ` * ` + a.add(bm25Consts.k1p1) + `::float8) / (` + f + ` + ` + k + `)))`
}

// bm25K is the SQL of FTS5's k1·((1-b) + b·D/avgdl) of a record of
// length d (an SQL expression).
func bm25K(a *args, d string, avgdl float64) string {
	return `(` + a.add(bm25Consts.k1) + `::float8 * (` + a.add(bm25Consts.omb) + `::float8 + (` + a.add(bm25Consts.b) +
		`::float8 * ` + d + `) / ` + a.add(avgdl) + `::float8))`
}

// tsqueryLexeme matches one quoted lexeme of a tsquery's text.
var tsqueryLexeme = regexp.MustCompile(`^'((?:[^']|'')*)'$`)

// phraseLexemes returns the lexemes of a phrase tsquery's text ('a' <->
// 'b' <-> 'c', or 'a'), false for any other form.
func phraseLexemes(tq string) ([]string, bool) {
	if strings.TrimSpace(tq) == "" {
		return nil, false
	}
	var out []string
	for _, p := range strings.Split(tq, " <-> ") {
		m := tsqueryLexeme.FindStringSubmatch(strings.TrimSpace(p))
		if m == nil {
			return nil, false
		}
		out = append(out, strings.ReplaceAll(m[1], "''", "'"))
	}
	return out, true
}

// wordScore returns the SQL of FTS5's bm25 of record x over the word terms
// whose tsqueries are tqs (idfs their idfs) in column col of the kind, and
// the lateral joins it reads: for each of the column's document columns,
// the positions of each query lexeme there. A term whose tsquery is not a
// phrase of lexemes (none is, from keyword.Query's terms) counts one
// occurrence where it matches.
func wordScore(a *args, kind imprint.Kind, col string, tqs []string, idfs []float64, avgdl float64) (score, joins string) {
	fs, joins := wordFreqs(a, kind, col, tqs)
	k := bm25K(a, `x.ntok::float8`, avgdl)
	parts := make([]string, len(tqs))
	for i, f := range fs {
		parts[i] = bm25Term(a, idfs[i], f, k)
	}
	return strings.Join(parts, " + "), joins
}

// wordFreqs returns the SQL of each word term's f in record x (float8;
// see wordScore) and the lateral joins they read.
func wordFreqs(a *args, kind imprint.Kind, col string, tqs []string) (fs []string, joins string) {
	cols := bm25Columns[kind][col]
	lexOf := make([][]string, len(tqs))
	slot := map[string]int{}
	var lexemes []string
	for i, tq := range tqs {
		ls, ok := phraseLexemes(tq)
		if !ok {
			continue
		}
		lexOf[i] = ls
		for _, l := range ls {
			if _, seen := slot[l]; !seen {
				slot[l] = len(lexemes)
				lexemes = append(lexemes, l)
			}
		}
	}
	var js []string
	if len(lexemes) > 0 {
		lexArg := a.add(lexemes) + `::text[]`
		for c, bc := range cols {
			var sel []string
			for j := range lexemes {
				sel = append(sel, `min(u.positions) FILTER (WHERE u.lexeme = (`+lexArg+`)[`+strconv.Itoa(j+1)+`]) AS p`+strconv.Itoa(j))
			}
			js = append(js, ` CROSS JOIN LATERAL (SELECT `+strings.Join(sel, ", ")+` FROM unnest(ts_filter(setweight(`+
				bc.tsv+`, 'C', `+lexArg+`), '{c}')) u) c`+strconv.Itoa(c))
		}
	}
	fs = make([]string, len(tqs))
	for i, ls := range lexOf {
		if ls == nil {
			fs[i] = `(CASE WHEN x.` + col + ` @@ ` + a.add(tqs[i]) + `::tsquery THEN 1 ELSE 0 END)::float8`
			continue
		}
		var cs []string
		for c, bc := range cols {
			cs = append(cs, `(`+phraseCount("c"+strconv.Itoa(c), ls, slot)+`)::float8 * `+a.add(bc.weight)+`::float8`)
		}
		fs[i] = `(` + strings.Join(cs, " + ") + `)`
	}
	return fs, strings.Join(js, "")
}

// bm25Score is the score wordScore's SQL gives a record of length d whose
// terms occur f times (fs, idfs in query order), with the same float64
// operations in the same order as PostgreSQL's float8.
func bm25Score(fs, idfs []float64, d, avgdl float64) float64 {
	c := bm25Consts
	k := c.k1 * (c.omb + (c.b*d)/avgdl)
	s := 0.0
	for i, f := range fs {
		// The conversions keep the compiler from fusing a multiply
		// and an add, which the server never does.
		s += float64(idfs[i] * ((f * c.k1p1) / (f + k)))
	}
	return s
}

// phraseCount is the SQL of how often the phrase of lexemes ls occurs in
// the positions of lateral c (its pN columns, N the lexeme's slot): the
// positions of the first lexeme that the others follow one by one.
func phraseCount(c string, ls []string, slot map[string]int) string {
	pos := func(l string) string { return c + ".p" + strconv.Itoa(slot[l]) }
	if len(ls) == 1 {
		return `COALESCE(cardinality(` + pos(ls[0]) + `), 0)`
	}
	var conds []string
	for j, l := range ls[1:] {
		conds = append(conds, `p + `+strconv.Itoa(j+1)+` = ANY(`+pos(l)+`)`)
	}
	return `(SELECT COUNT(*) FROM unnest(` + pos(ls[0]) + `) p WHERE ` + strings.Join(conds, " AND ") + `)`
}

// trigramScore returns the SQL of FTS5's bm25 of record x over the CJK
// phrases tri (idfs their idfs) in its trigram index: f is how often the
// phrase occurs in x.cjk, overlapping ones included.
func trigramScore(a *args, tri []string, idfs []float64, avgdl float64) string {
	k := bm25K(a, `(char_length(x.cjk) - 2)::float8`, avgdl)
	parts := make([]string, len(tri))
	for i, t := range tri {
		f := `regexp_count(x.cjk, ` + a.add(`(?=`+regexp.QuoteMeta(t)+`)`) + `)::float8`
		parts[i] = bm25Term(a, idfs[i], f, k)
	}
	return strings.Join(parts, " + ")
}
