package search_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/search"
	"github.com/imprint-dev/imprint/sqlite"
)

// locomoStore is a store holding the LoCoMo conversations' messages, each
// with its hash vector, and one memory per tenth message, in one scope.
func locomoStore(t *testing.T) (*sqlite.DB, []string) {
	t.Helper()
	ctx := context.Background()
	path := testfiles.Path(t, "locomo/locomo-2conv.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	trs, err := importer.ReadLoCoMo(f, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	emb := embedding.NewHash()
	var texts []string
	for _, tr := range trs {
		msgs := slices.Clone(tr.Messages)
		for i := range msgs {
			vs, err := emb.Embed(ctx, []string{msgs[i].Content})
			if err != nil {
				t.Fatal(err)
			}
			msgs[i].Vec, msgs[i].Embedder = vs[0], emb.Name()
			texts = append(texts, msgs[i].Content)
			if i%10 == 0 {
				storeMemory(t, db, emb, msgs[i].ID, msgs[i].Content)
			}
		}
		if _, err := db.AppendMessages(ctx, scopeA, tr.SessionID, msgs); err != nil {
			t.Fatal(err)
		}
	}
	return db, texts
}

// storeMemory stores a live persona memory of scopeA with its vector.
func storeMemory(t *testing.T, db *sqlite.DB, emb imprint.Embedder, id, content string) {
	t.Helper()
	vs, err := emb.Embed(context.Background(), []string{content})
	if err != nil {
		t.Fatal(err)
	}
	m := imprint.Memory{ID: id, Content: content, Type: imprint.MemoryPersona, Priority: 50, SessionID: "s1", Scope: scopeA,
		Version: 1, Extractor: imprint.ExtractorHeuristic, Embedder: emb.Name(), Vec: vs[0], SourceMessageIDs: []string{id}}
	if err := db.PutMemory(context.Background(), m, nil); err != nil {
		t.Fatal(err)
	}
}

// TestLexicalVectorsNeverReorderKeywords checks, on real conversations,
// that hybrid search with the hash embedder returns the keyword hits in
// their order, vector-only hits only after them: a lexical ranking must
// not lower recall below keywords alone.
func TestLexicalVectorsNeverReorderKeywords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, texts := locomoStore(t)
	hybrid := search.Searcher{Store: db, Embedder: embedding.NewHash()}
	keywords := search.Searcher{Store: db}
	filled := 0
	for i := 0; i < len(texts); i += 7 {
		// A question made of a turn's first words, as a user would ask.
		words := strings.Fields(texts[i])
		q := imprint.SearchQuery{Scope: scopeA, Text: strings.Join(words[:min(6, len(words))], " "), Limit: 10}
		for _, kind := range []string{"message", "memory", "all"} {
			q.Kinds, _ = imprint.ParseKind(kind)
			h, err := hybrid.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			k, err := keywords.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(h) < len(k) || !slices.Equal(hitIDs(h[:len(k)]), hitIDs(k)) {
				t.Fatalf("%s %q: hybrid %v does not start with the keyword hits %v", kind, q.Text, hitIDs(h), hitIDs(k))
			}
			filled += len(h) - len(k)
			for j := 1; j < len(h); j++ {
				if h[j].Score > h[j-1].Score {
					t.Fatalf("%s %q: scores not descending: %v", kind, q.Text, h)
				}
			}
		}
	}
	if filled == 0 {
		t.Error("no vector hit ever filled a place keywords left: the test shows nothing")
	}
}

// TestSearchMatchingNothingFindsNothing: a query no record shares a word
// with gets no hits of any kind, though the hash vectors of short
// gibberish collide with real text by chance; recall gives no block.
func TestSearchMatchingNothingFindsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := locomoStore(t)
	s := search.Searcher{Store: db, Embedder: embedding.NewHash()}
	r := search.Recaller{Searcher: s, Memories: db, Traces: db}
	for _, q := range []string{"zzzzqqq", "qwxz blorf", "xkcdvv", "fjdksla", "mmmpphh ttt", "grblx"} {
		hits, err := s.Search(ctx, imprint.SearchQuery{Scope: scopeA, Text: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 0 {
			t.Errorf("search %q: %d hits, first %q", q, len(hits), hits[0].Text)
		}
		res, err := r.Recall(ctx, imprint.RecallQuery{Scope: scopeA, Text: q})
		if err != nil {
			t.Fatal(err)
		}
		if res.Context != "" {
			t.Errorf("recall %q:\n%s", q, res.Context)
		}
	}
	// A typo keywords cannot match still finds its word through the
	// vectors' character n-grams.
	q := imprint.SearchQuery{Scope: scopeA, Text: "potery", Kinds: []imprint.Kind{imprint.KindMessage}}
	if kw, err := (search.Searcher{Store: db}).Search(ctx, q); err != nil || len(kw) != 0 {
		t.Fatalf("keywords alone for the typo: %v, %v; want none", kw, err)
	}
	hits, err := s.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || !strings.Contains(strings.ToLower(hits[0].Text), "pottery") {
		t.Errorf("typo query: %v", hits)
	}
}

// topicEmbedder serves /v1/embeddings with vectors over a few topics, so
// that words sharing no letters share a vector: a semantic embedder.
func topicEmbedder(t *testing.T) imprint.Embedder {
	t.Helper()
	topics := [][]string{{"car", "automobile", "vehicle", "drive"}, {"cat", "kitten", "feline"}, {"rain", "umbrella", "weather"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/embeddings" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			v := make([]float64, len(topics)+1)
			v[len(topics)] = 0.05
			for _, w := range strings.Fields(strings.ToLower(text)) {
				for k, ws := range topics {
					if slices.Contains(ws, strings.Trim(w, ".,!?")) {
						v[k]++
					}
				}
			}
			var n float64
			for _, x := range v {
				n += x * x
			}
			for k := range v {
				v[k] /= math.Sqrt(n)
			}
			out.Data = append(out.Data, item{Index: i, Embedding: v})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	e, err := embedding.NewOpenAI(embedding.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "topics"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestSemanticVectorsCountFully: with an embedder that is not lexical, a
// record only the vectors find (no word in common) ranks with the keyword
// hits in reciprocal rank fusion, not after them.
func TestSemanticVectorsCountFully(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	emb := topicEmbedder(t)
	if imprint.IsLexical(emb) {
		t.Fatal("an /v1/embeddings model is not lexical")
	}
	storeMemory(t, db, emb, "car", "The user drives an old Volvo car to work.")
	storeMemory(t, db, emb, "auto", "The user wants to sell the automobile this spring.")
	// Says "car" once, but its vector is about the weather.
	storeMemory(t, db, emb, "rainy", "Rain, rain, weather, umbrella: rain again, the umbrella, weather, rain, so the car waits.")
	hits, err := search.Searcher{Store: db, Embedder: emb}.Search(ctx, imprint.SearchQuery{Scope: scopeA, Text: "car", Kinds: []imprint.Kind{imprint.KindMemory}})
	if err != nil {
		t.Fatal(err)
	}
	// auto is 2nd of the vectors, rainy 2nd of the keywords: fused fully,
	// they score the same, 1/(RRFK+2).
	if ids := hitIDs(hits); len(ids) != 3 || ids[0] != "car" || math.Abs(hits[1].Score-hits[2].Score) > 1e-12 ||
		math.Abs(hits[1].Score-1.0/(search.RRFK+2)) > 1e-12 {
		t.Errorf("hits %+v: the automobile memory shares no word with \"car\" but its vector does; fused fully it ranks with the keyword hits", hits)
	}
	// The hash embedder would put it last: it only fills.
	lex, err := search.Searcher{Store: db, Embedder: embedding.NewHash()}.Search(ctx, imprint.SearchQuery{Scope: scopeA, Text: "car", Kinds: []imprint.Kind{imprint.KindMemory}})
	if err != nil {
		t.Fatal(err)
	}
	if ids := hitIDs(lex); len(ids) < 2 || !slices.Equal(ids[:2], []string{"car", "rainy"}) || lex[1].Score != 1.0/(search.RRFK+2) {
		t.Errorf("hash hits %+v: want the keyword hits car, rainy first, in their keyword order", lex)
	}
}
