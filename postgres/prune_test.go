package postgres

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/benchtext"
	"github.com/imprint-dev/imprint/keyword"
)

// TestSearchMemoriesExact checks that the one-pass memory search
// (searchMemories) gives, over hundreds of queries of real words, exactly
// the hits and scores of ranking every match with the same idfs
// (rankIndex), with the thresholds lowered so a few thousand memories
// make a large table with common terms: queries of rare terms only, of
// rare and common terms where the common terms' records are never read,
// and of common terms only; with scope, session and exclusion filters, and
// the rare terms counted exactly over every scope.
func TestSearchMemoriesExact(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	ctx := t.Context()
	texts := benchtext.RealTexts(t)
	const rows = 3000
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	other := imprint.Scope{Tenant: "t", User: "other", Agent: "a"}
	df := map[string]int{}
	var mu sync.Mutex
	if err := putMemories(ctx, db, rows, func(i int) imprint.Memory {
		m := imprint.Memory{ID: fmt.Sprintf("m%05d", i), Scope: scope, SessionID: fmt.Sprintf("s%d", i%7),
			Content: benchtext.Row(texts, i), Type: imprint.MemoryEpisodic}
		if i%10 == 9 {
			m.Scope = other // counted for the idf, never a hit
		}
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for _, tok := range keyword.Tokenize(strings.ToLower(m.Content)) {
			if !tok.CJK && len(tok.Text) >= 3 && !seen[tok.Text] && !keyword.IsStopWord(tok.Text) {
				seen[tok.Text] = true
				df[tok.Text]++
			}
		}
		return m
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `ANALYZE memories`); err != nil {
		t.Fatal(err)
	}
	db.termLimits = termLimits{exactBelow: 1000, common: 60}
	var rare, mid, common []string
	for w, n := range df {
		switch {
		case n <= 8:
			rare = append(rare, w)
		case n >= 20 && n <= 50:
			mid = append(mid, w)
		case n >= 150:
			common = append(common, w)
		}
	}
	for _, ws := range [][]string{rare, mid, common} {
		sort.Strings(ws)
	}
	if len(rare) < 50 || len(mid) < 20 || len(common) < 10 {
		t.Fatalf("%d rare, %d middling and %d common words in the fixture", len(rare), len(mid), len(common))
	}
	r := rand.New(rand.NewPCG(15, 7))
	pick := func() string {
		switch x := r.IntN(10); {
		case x < 3:
			return rare[r.IntN(len(rare))]
		case x < 6:
			return mid[r.IntN(len(mid))]
		default:
			return common[r.IntN(len(common))]
		}
	}
	src := hitSources[imprint.KindMemory]
	all := func(int64) bool { return true }
	var pruned, onePass, commonOnly int
	for i := range 300 {
		terms := make([]string, 1+r.IntN(4))
		for j := range terms {
			terms[j] = pick()
		}
		q := imprint.TextQuery{Scope: scope, Kind: imprint.KindMemory, Text: strings.Join(terms, " ")}
		switch i % 6 {
		case 1:
			q.SessionID = fmt.Sprintf("s%d", r.IntN(7))
		case 2:
			q.ExcludeIDs = []string{fmt.Sprintf("m%05d", r.IntN(rows)), fmt.Sprintf("m%05d", r.IntN(rows))}
		}
		kw := keyword.Query(q.Text)
		want := []int{2, 10, 20, 60}[i%4]
		got, st, wasPruned, err := db.searchMemories(ctx, q, src, "words", kw.Words, want)
		if err != nil {
			t.Fatal(err)
		}
		full, err := db.rankIndex(ctx, q, src, "words", kw.Words, nil, st, all, want)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(full) {
			t.Fatalf("%q (want %d): %d hits, ranking every match gives %d", q.Text, want, len(got), len(full))
		}
		for k := range got {
			if got[k].hit.ID != full[k].hit.ID || got[k].hit.Score != full[k].hit.Score || got[k].hit.Text != full[k].hit.Text {
				t.Fatalf("%q (want %d): hit %d is %s (%v), ranking every match gives %s (%v)", q.Text, want, k,
					got[k].hit.ID, got[k].hit.Score, full[k].hit.ID, full[k].hit.Score)
			}
		}
		// The counts of the terms not common are exact, over every
		// scope; the others are the planner's estimate, above common.
		var isCommon bool
		for k, w := range kw.Words {
			var n int64
			if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM memories WHERE superseded_by IS NULL AND forgotten_at IS NULL
				AND words @@ phraseto_tsquery('imprint', $1)`, w).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if st.wordHits[k] <= 60 && st.wordHits[k] != n {
				t.Fatalf("%q: term %q counted %d, holds %d", q.Text, w, st.wordHits[k], n)
			}
			if st.wordHits[k] > 60 {
				isCommon = true
			}
		}
		switch {
		case wasPruned:
			pruned++
		case !isCommon:
			onePass++
		default:
			commonOnly++
		}
	}
	t.Logf("300 queries: %d pruned, %d of rare terms only, %d ranked every match", pruned, onePass, commonOnly)
	if pruned < 20 || onePass < 20 || commonOnly < 20 {
		t.Errorf("%d pruned, %d of rare terms, %d ranking every match: the queries do not try each path", pruned, onePass, commonOnly)
	}
}

// TestSearchRareWordOfRetiredMemories: a word many memories held, nearly
// all of them superseded since (an updated fact), is rare among the live
// memories, the only ones SQLite's FTS5 indexes and counts. The planner
// estimates its live records as if "live" and "holds the word" were
// independent, so it looks common; uncounted, it would get the estimate's
// idf and its one live memory would rank below the memories of a word
// twenty times as frequent, or not be read at all.
func TestSearchRareWordOfRetiredMemories(t *testing.T) {
	db := openTemp(t)
	db.termLimits = termLimits{exactBelow: 1000, common: 200}
	ctx := t.Context()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	const rows, zebras, alphas = 1500, 400, 20
	content := func(i int) string {
		switch {
		case i < zebras:
			return fmt.Sprintf("the favourite animal is zebra note %d", i)
		case i < zebras+alphas:
			return fmt.Sprintf("the favourite letter is alpha note %d", i)
		}
		return fmt.Sprintf("the favourite colour is blue note %d", i)
	}
	var puts []imprint.MemoryPut
	for i := range rows {
		puts = append(puts, imprint.MemoryPut{Memory: imprint.Memory{ID: fmt.Sprintf("m%05d", i), Scope: scope,
			Content: content(i), Type: imprint.MemoryEpisodic}})
	}
	// The fact was updated: every zebra memory but m00000 is superseded.
	for i := 1; i < zebras; i++ {
		puts = append(puts, imprint.MemoryPut{Memory: imprint.Memory{ID: fmt.Sprintf("r%05d", i), Scope: scope,
			Content: fmt.Sprintf("the favourite animal is now a cat note %d", i), Type: imprint.MemoryEpisodic},
			Supersede: []string{fmt.Sprintf("m%05d", i)}})
	}
	if err := db.PutMemories(ctx, puts); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `ANALYZE memories`); err != nil {
		t.Fatal(err)
	}
	src := hitSources[imprint.KindMemory]
	tqs, est, err := db.termPlan(ctx, src, "words", []string{"zebra"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if est[0] <= 200 {
		t.Skipf("the planner estimates %d live records of zebra (%s): not the case this test is about", est[0], tqs[0])
	}
	hits, err := db.SearchText(ctx, imprint.TextQuery{Scope: scope, Kind: imprint.KindMemory, Text: "zebra alpha", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	// One live memory holds zebra, twenty hold alpha: zebra's idf is the
	// higher, so m00000 ranks first, as on SQLite.
	if len(ids) == 0 || ids[0] != "m00000" {
		t.Errorf("search %q (zebra estimated at %d live records): hits %v; want m00000, the only live memory holding zebra, first",
			"zebra alpha", est[0], ids)
	}
}
