package search_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/internal/benchtext"
	"github.com/imprint-dev/imprint/search"
	"github.com/imprint-dev/imprint/sqlite"
)

// countingStore is the SQLite store, counting its keyword searches.
type countingStore struct {
	*sqlite.DB
	texts atomic.Int64
}

func (c *countingStore) SearchText(ctx context.Context, q imprint.TextQuery) ([]imprint.Hit, error) {
	c.texts.Add(1)
	return c.DB.SearchText(ctx, q)
}

// TestSearchAndRecallIsSearchThenRecall checks, over real text in memories,
// traces and messages, that SearchAndRecall gives exactly the hits of
// Search and the block of Recall, each run alone, for queries of rare and
// common words, of CJK text, with and without kinds and limits; and that
// it makes fewer keyword searches than the two apart (the recall's memory
// and trace searches are the search's).
func TestSearchAndRecallIsSearchThenRecall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	texts := benchtext.RealTexts(t)
	const rows = 1500
	cjk := []string{"我们明天去北京开会", "北京的天气很好", "会议在东京举行"}
	text := func(i int) string {
		if i%97 == 0 {
			return cjk[i%len(cjk)] + " " + benchtext.Row(texts, i)
		}
		return benchtext.Row(texts, i)
	}
	msgs := make([]imprint.Message, 0, rows)
	for i := range rows {
		msgs = append(msgs, imprint.Message{ID: fmt.Sprintf("m%d", i), Role: imprint.RoleUser, Content: text(i)})
		typ := []imprint.MemoryType{imprint.MemoryEpisodic, imprint.MemoryPersona, imprint.MemoryInstruction}[i%3]
		if err := db.PutMemory(ctx, imprint.Memory{ID: fmt.Sprintf("mem%d", i), Content: text(i + 7), Type: typ, Priority: 50,
			Scope: scopeA, SessionID: "s1", Extractor: imprint.ExtractorHeuristic}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.AppendMessages(ctx, scopeA, "s1", msgs); err != nil {
		t.Fatal(err)
	}
	for e := range rows / 10 {
		ep := imprint.Episode{ID: fmt.Sprintf("ep%d", e), SessionID: "s1", Scope: scopeA, Status: imprint.EpisodeFinalized, ClosedBy: imprint.ClosedFinalized}
		var trs []imprint.Trace
		for k := range 10 {
			i := e*10 + k
			trs = append(trs, imprint.Trace{ID: fmt.Sprintf("t%d", i), EpisodeID: ep.ID, SessionID: "s1", Scope: scopeA, StepKey: fmt.Sprint(k),
				StepIndex: k, UserText: text(i + 3), AgentText: text(i + 11)})
		}
		if err := db.SaveCapture(ctx, ep, trs); err != nil {
			t.Fatal(err)
		}
	}
	store := &countingStore{DB: db}
	r := search.Recaller{Searcher: search.Searcher{Store: store, Embedder: embedding.NewHash()}, Memories: db, Traces: db, Messages: db}

	words := strings.Fields(strings.ToLower(strings.Join(texts[:200], " ")))
	rnd := rand.New(rand.NewPCG(3, 3))
	queries := []string{"painting sunset", "flight reservation", "北京 meeting", "东京", "what did caroline paint recently"}
	for range 40 {
		n := 1 + rnd.IntN(4)
		q := make([]string, n)
		for i := range q {
			q[i] = strings.Trim(words[rnd.IntN(len(words))], `.,!?"'()`)
		}
		queries = append(queries, strings.Join(q, " "))
	}
	var together, apart int64
	for i, text := range queries {
		kinds, _ := imprint.ParseKind([]string{"all", "memory", "trace"}[i%3])
		sq := imprint.SearchQuery{Scope: scopeA, Text: text, Kinds: kinds, Limit: []int{20, 5, 40}[i%3]}
		rq := imprint.RecallQuery{Scope: scopeA, Text: text, BudgetTokens: 4000}
		before := store.texts.Load()
		hits, rec, err := r.SearchAndRecall(ctx, sq, rq)
		if err != nil {
			t.Fatal(err)
		}
		mid := store.texts.Load()
		wantHits, err := r.Search(ctx, sq)
		if err != nil {
			t.Fatal(err)
		}
		wantRec, err := r.Recall(ctx, rq)
		if err != nil {
			t.Fatal(err)
		}
		together, apart = together+mid-before, apart+store.texts.Load()-mid
		if diff := cmp.Diff(wantHits, hits); diff != "" {
			t.Errorf("query %q: SearchAndRecall's hits differ from Search's (-want +got):\n%s", text, diff)
		}
		if diff := cmp.Diff(wantRec, rec); diff != "" {
			t.Errorf("query %q: SearchAndRecall's recall differs from Recall's (-want +got):\n%s", text, diff)
		}
	}
	if together >= apart {
		t.Errorf("SearchAndRecall made %d keyword searches, Search and Recall apart %d: nothing shared", together, apart)
	}
	t.Logf("%d queries: %d keyword searches together, %d apart", len(queries), together, apart)
}
