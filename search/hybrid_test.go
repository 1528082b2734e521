package search

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/sqlite"
)

func putMemory(t *testing.T, db *sqlite.DB, emb imprint.Embedder, scope imprint.Scope, id, content string, supersede ...string) {
	t.Helper()
	vs, err := emb.Embed(context.Background(), []string{content})
	if err != nil {
		t.Fatal(err)
	}
	now := imprint.At(time.Now())
	m := imprint.Memory{ID: id, Content: content, Type: imprint.MemoryPersona, Priority: 70, SessionID: "s",
		Scope: scope, CreatedAt: now, UpdatedAt: now, Version: 1 + len(supersede), Extractor: imprint.ExtractorHeuristic,
		SourceMessageIDs: []string{"m-" + id}, Supersedes: supersede, ContentHash: extract.ContentHash(content),
		Vec: vs[0], Embedder: emb.Name()}
	if err := db.PutMemory(context.Background(), m, supersede); err != nil {
		t.Fatal(err)
	}
}

func TestHybridSearchOnStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	emb := embedding.NewHash()
	me := imprint.DefaultScope()
	other := imprint.Scope{Tenant: "default", User: "bob", Agent: "default"}
	putMemory(t, db, emb, me, "a1", "User lives in Amsterdam and cycles to work.")
	putMemory(t, db, emb, me, "a2", "User lives in Rotterdam and cycles to work.", "a1") // a correction
	putMemory(t, db, emb, me, "b1", "User prefers Python over Bash for long scripts.")
	putMemory(t, db, emb, me, "c1", "用户住在北京，喜欢喝咖啡。")
	putMemory(t, db, emb, other, "x1", "Bob lives in Amsterdam.")

	s := Searcher{Store: db, Embedder: emb}
	kinds, _ := imprint.ParseKind("memory")
	hits, err := s.Search(ctx, imprint.SearchQuery{Scope: me, Text: "where does the user live", Kinds: kinds, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].ID != "a2" {
		t.Fatalf("hits %+v: want the live correction a2 first", hits)
	}
	for _, h := range hits {
		if h.ID == "a1" {
			t.Errorf("superseded memory a1 returned: %+v", hits)
		}
		if h.ID == "x1" {
			t.Errorf("another scope's memory returned: %+v", hits)
		}
		if h.Kind != imprint.KindMemory || len(h.SourceMessageIDs) == 0 {
			t.Errorf("hit without kind or provenance: %+v", h)
		}
	}
	cjk, err := s.Search(ctx, imprint.SearchQuery{Scope: me, Text: "北京", Kinds: kinds, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(cjk) == 0 || cjk[0].ID != "c1" {
		t.Fatalf("2-character CJK query: %+v", cjk)
	}
	// Without an embedder search is keyword-only and still works.
	kw, err := Searcher{Store: db}.Search(ctx, imprint.SearchQuery{Scope: me, Text: "Python Bash", Kinds: kinds})
	if err != nil || len(kw) == 0 || kw[0].ID != "b1" {
		t.Fatalf("keyword-only search: %+v, %v", kw, err)
	}
	if _, err := s.Search(ctx, imprint.SearchQuery{Scope: me, Text: "   "}); err == nil {
		t.Error("empty query accepted")
	}
}
