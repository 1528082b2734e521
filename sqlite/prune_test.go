package sqlite

import (
	"context"
	"fmt"
	"github.com/imprint-dev/imprint/internal/benchtext"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/keyword"
)

// TestSearchTextPruned checks, on real text, that SearchText with top-k
// pruning returns the same hits in the same order as the plain bm25 query,
// for hundreds of 1-5-term queries mixing rare, middling (rare enough to be
// candidates, common enough to lose to common-only rows) and common words,
// with session, exclusion and scope filters, over messages and memories;
// and that a memory search's hits are the first of a deeper one's.
func TestSearchTextPruned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	texts := benchtext.RealTexts(t)
	const rows, batch = 12_000, 1000
	other := imprint.Scope{Tenant: "bench", User: "other", Agent: "bench"}
	df := map[string]int{}
	for lo := 0; lo < rows; lo += batch {
		msgs := make([]imprint.Message, 0, batch)
		for i := lo; i < lo+batch; i++ {
			text := benchtext.Row(texts, i)
			msgs = append(msgs, imprint.Message{ID: fmt.Sprintf("m%d", i), Role: imprint.RoleUser, Content: text})
			seen := map[string]bool{}
			for _, tok := range keyword.Tokenize(strings.ToLower(text)) {
				// Stop words never reach a query.
				if !tok.CJK && len(tok.Text) >= 2 && !seen[tok.Text] && !keyword.IsStopWord(tok.Text) {
					seen[tok.Text] = true
					df[tok.Text]++
				}
			}
		}
		scope := benchScope
		if lo >= rows-2*batch {
			scope = other // rows the scope filter must drop
		}
		if _, err := db.AppendMessages(ctx, scope, fmt.Sprintf("s%d", lo/batch), msgs); err != nil {
			t.Fatal(err)
		}
		for i, m := range msgs {
			if err := db.PutMemory(ctx, imprint.Memory{ID: fmt.Sprintf("mem%d", lo+i), Content: m.Content, Type: imprint.MemoryEpisodic,
				Scope: scope, SessionID: fmt.Sprintf("s%d", lo/batch), Extractor: imprint.ExtractorLLM}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	var rare, mid, common []string
	for w, n := range df {
		switch {
		case n <= 40:
			rare = append(rare, w)
		case n >= 400 && n <= 2000:
			mid = append(mid, w)
		case n >= 2500:
			common = append(common, w)
		}
	}
	for _, ws := range [][]string{rare, mid, common} {
		sort.Strings(ws)
	}
	if len(common) < 5 || len(rare) < 100 {
		t.Fatalf("%d common and %d rare words in the fixture", len(common), len(rare))
	}
	r := rand.New(rand.NewPCG(5, 5))
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
	// At the store's threshold most common words of 12k rows are rare for
	// searchPruned; at 300 the middling and common ones are common, so
	// queries of common words only are pruned step by step.
	for _, c := range []struct {
		kind  imprint.Kind
		table string
		above int
	}{
		{imprint.KindMessage, "message_words", commonTermRows}, {imprint.KindMessage, "message_words", 300},
		{imprint.KindMemory, "memory_words", 300},
	} {
		pruned, compared := 0, 0
		for i := range 200 {
			terms := make([]string, 1+r.IntN(5))
			for j := range terms {
				terms[j] = pick()
			}
			q := imprint.TextQuery{Scope: benchScope, Kind: c.kind, Text: strings.Join(terms, " "),
				Limit: []int{1, 5, 10, 30}[i%4]}
			switch i % 5 {
			case 1:
				q.SessionID = fmt.Sprintf("s%d", r.IntN(rows/batch))
			case 2:
				plain, err := db.searchText(ctx, q, 0)
				if err != nil {
					t.Fatal(err)
				}
				for k := 0; k < len(plain); k += 2 {
					q.ExcludeIDs = append(q.ExcludeIDs, plain[k].ID)
				}
			}
			want, err := db.searchText(ctx, q, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.searchText(ctx, q, c.above)
			if err != nil {
				t.Fatal(err)
			}
			compared++
			if diff := hitDiff(got, want); diff != "" {
				t.Errorf("%s query %q (limit %d, session %q, %d excluded, common above %d rows): %s",
					c.kind, q.Text, q.Limit, q.SessionID, len(q.ExcludeIDs), c.above, diff)
			}
			if c.kind == imprint.KindMemory {
				deep := q
				deep.Limit = 3 * q.Limit
				all, err := db.searchText(ctx, deep, c.above)
				if err != nil {
					t.Fatal(err)
				}
				if diff := hitDiff(got, all[:min(len(all), q.Limit)]); diff != "" || !sameIDs(got, all) {
					t.Errorf("memory query %q: %d hits are not the first of %d: %s", q.Text, q.Limit, deep.Limit, diff)
				}
			}
			src, _ := sourceOf(q.Kind)
			filter, fargs := hitFilter(q, src)
			fq := buildQuery(q.Text)
			depth := imprint.SearchLimit(q.Limit)
			if c.kind == imprint.KindMessage {
				depth *= 2
			}
			words, ts := fq.words, strings.Split(fq.words, " OR ")
			if c.kind == imprint.KindMessage {
				words = messageOwnColumns + "(" + words + ")"
				for i, t := range ts {
					ts[i] = messageOwnColumns + t
				}
			}
			if _, unscored, _, err := db.searchPruned(ctx, q.Kind, src, c.table, words, ts,
				filter, fargs, depth, c.above); err != nil {
				t.Fatal(err)
			} else if unscored > 0 {
				pruned++
			}
		}
		// The comparison only means something if pruning left rows
		// unscored in many queries.
		if pruned < compared/5 {
			t.Errorf("%s, common above %d rows: pruning skipped rows in %d of %d queries, want at least a fifth", c.kind, c.above, pruned, compared)
		}
		t.Logf("%s, common above %d rows: pruning skipped rows in %d of %d queries", c.kind, c.above, pruned, compared)
	}
}

// sameIDs reports whether the ids of got are those that begin all, in
// order.
func sameIDs(got, all []imprint.Hit) bool {
	if len(got) > len(all) {
		return false
	}
	for i := range got {
		if got[i].ID != all[i].ID {
			return false
		}
	}
	return true
}

// hitDiff describes how got differs from want: the same scores (to float
// rounding) and the same ids in the same order, except that rows tied with
// the last score may differ (the plain query cuts ties arbitrarily).
func hitDiff(got, want []imprint.Hit) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d hits, want %d", len(got), len(want))
	}
	same := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for i := range got {
		if !same(got[i].Score, want[i].Score) {
			return fmt.Sprintf("hit %d scores %v, want %v", i, got[i].Score, want[i].Score)
		}
		if got[i].ID != want[i].ID && !same(want[i].Score, want[len(want)-1].Score) {
			return fmt.Sprintf("hit %d is %s, want %s", i, got[i].ID, want[i].ID)
		}
	}
	return ""
}
