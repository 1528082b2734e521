package vector_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint/internal/testfiles"

	"github.com/google/go-cmp/cmp"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/vector"
)

// sharedTestdata returns the repository's testdata folder.
func sharedTestdata(t *testing.T) string { return testfiles.Dir() }

// jsonTexts collects the strings of at least four words in a JSON file,
// split into those under a "question" key and the rest.
func jsonTexts(t *testing.T, path string) (questions, texts []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read testdata: %v", err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	seen := map[string]bool{}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(k, x)
			}
		case []any:
			for _, x := range v {
				walk(key, x)
			}
		case string:
			if len(strings.Fields(v)) < 4 || seen[v] {
				return
			}
			seen[v] = true
			if key == "question" {
				questions = append(questions, v)
			} else {
				texts = append(texts, v)
			}
		}
	}
	walk("", doc)
	return questions, texts
}

// TestQuantTopKRecallHashEmbedder stores hash-embedder vectors of LoCoMo
// and τ-bench texts (single texts and random pairs of them) and asks the LoCoMo questions: the int8 path must give the
// exact top 10 in at least 99% of queries, and the exact top 1 whenever it
// leads by more than 0.02.
func TestQuantTopKRecallHashEmbedder(t *testing.T) {
	t.Parallel()
	dir := sharedTestdata(t)
	questions, texts := jsonTexts(t, filepath.Join(dir, "locomo", "locomo-2conv.json"))
	_, tau := jsonTexts(t, filepath.Join(dir, "tau-bench", "airline-40.json"))
	texts = append(texts, tau...)
	want := 30_000
	if testing.Short() || vector.RaceEnabled {
		want = vector.QuantMinRows + 1000
		questions = questions[:min(len(questions), 100)]
	}
	// Pairs of texts stand for the longer chunks of a bigger store.
	r := rand.New(rand.NewPCG(31, 32))
	for base := len(texts); len(texts) < want; {
		texts = append(texts, texts[r.IntN(base)]+" "+texts[r.IntN(base)])
	}
	if len(texts) < want || len(questions) < 50 {
		t.Fatalf("testdata gave %d texts and %d questions", len(texts), len(questions))
	}
	emb := embedding.NewHash()
	ctx := context.Background()
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	qv, err := emb.Embed(ctx, questions)
	if err != nil {
		t.Fatal(err)
	}
	m := vector.NewMatrix(emb.Dimensions())
	for _, v := range vecs {
		m.Add(v)
	}
	if !vector.Quantized(m) {
		t.Fatal("no int8 copy")
	}
	const k = 10
	same, clear := 0, 0
	for qi, q := range qv {
		got := m.TopK(q, k, -2, nil)
		exact := vector.ExactTopK(m, q, k, -2, nil)
		if cmp.Equal(exact, got) {
			same++
		}
		if len(exact) > 1 && exact[0].Score-exact[1].Score > 0.02 {
			clear++
			if len(got) == 0 || got[0] != exact[0] {
				t.Errorf("question %q: top 1 %v, exact %v", questions[qi], got, exact[0])
			}
		}
		// minScore halfway down the exact list: the same head, exactly.
		if len(exact) == k {
			min := exact[k/2].Score
			if diff := cmp.Diff(vector.ExactTopK(m, q, k, min, nil), m.TopK(q, k, min, nil)); diff != "" {
				t.Errorf("question %q with minScore %v (-exact +TopK):\n%s", questions[qi], min, diff)
			}
		}
	}
	t.Logf("%d rows, %d questions: same top %d in %d, %d with a clear top 1", m.Len(), len(qv), k, same, clear)
	if same*100 < 99*len(qv) {
		t.Errorf("same top %d in %d of %d questions, want at least 99%%", k, same, len(qv))
	}
}
