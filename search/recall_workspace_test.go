package search_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/search"
	"github.com/imprint-dev/imprint/sqlite"
)

// TestRecallInAWorkspace: a recall in a workspace brings that workspace's
// standing instructions and memories and the workspace-less ones (persona,
// global instructions), never another workspace's ("always use pnpm in
// this repo" stays in its repo); of two equally relevant memories the
// workspace's own comes first. A recall naming no workspace covers all.
func TestRecallInAWorkspace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	emb := embedding.NewHash()
	put := func(id, ws string, typ imprint.MemoryType, content string) {
		t.Helper()
		vs, err := emb.Embed(ctx, []string{content})
		if err != nil {
			t.Fatal(err)
		}
		m := imprint.Memory{ID: id, Content: content, Type: typ, Priority: 60, SessionID: "s-" + id, Scope: scopeA, Workspace: ws,
			Version: 1, Extractor: imprint.ExtractorHeuristic, Embedder: emb.Name(), Vec: vs[0], SourceMessageIDs: []string{"m-" + id}}
		if err := db.PutMemory(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	put("i-app", "/src/app", imprint.MemoryInstruction, "Always use pnpm in this repo.")
	put("i-site", "/src/site", imprint.MemoryInstruction, "Always use yarn in this repo.")
	put("i-all", "", imprint.MemoryInstruction, "Always answer in British English.")
	put("p-all", "", imprint.MemoryPersona, "The user is a backend developer.")
	put("e-site", "/src/site", imprint.MemoryEpisodic, "The deploy of the package failed on Friday.")
	put("e-app", "/src/app", imprint.MemoryEpisodic, "The deploy of the package failed on Monday.")
	r := search.Recaller{Searcher: search.Searcher{Store: db, Embedder: emb}, Memories: db, Traces: db}

	recall := func(ws string) []string {
		t.Helper()
		res, err := r.Recall(ctx, imprint.RecallQuery{Scope: scopeA, Text: "why did the package deploy fail", Workspace: ws, Persona: true})
		if err != nil {
			t.Fatal(err)
		}
		return hitIDs(res.Hits)
	}
	app := recall("/src/app")
	for _, want := range []string{"i-app", "i-all", "p-all", "e-app"} {
		if !slices.Contains(app, want) {
			t.Errorf("recall in /src/app %v lacks %s", app, want)
		}
	}
	for _, other := range []string{"i-site", "e-site"} {
		if slices.Contains(app, other) {
			t.Errorf("recall in /src/app %v brings %s of /src/site", app, other)
		}
	}
	if i, j := slices.Index(app, "i-app"), slices.Index(app, "i-all"); i < 0 || j < 0 || i > j {
		t.Errorf("recall in /src/app %v: want its own instruction before the global one of the same priority", app)
	}
	all := recall("")
	for _, want := range []string{"i-app", "i-site", "i-all", "e-app", "e-site"} {
		if !slices.Contains(all, want) {
			t.Errorf("recall without a workspace %v lacks %s", all, want)
		}
	}
	elsewhere := recall("/src/other")
	if got := strings.Join(elsewhere, " "); strings.Contains(got, "-app") || strings.Contains(got, "-site") || !strings.Contains(got, "i-all") {
		t.Errorf("recall in a third workspace = %v, want the global records only", elsewhere)
	}
}

// TestSearchNarrowsToAWorkspace: a search without a workspace covers every
// workspace of the scope, with one only that workspace's records.
func TestSearchNarrowsToAWorkspace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	emb := embedding.NewHash()
	for _, m := range []struct{ id, ws string }{{"a", "/src/app"}, {"b", "/src/site"}, {"c", ""}} {
		vs, err := emb.Embed(ctx, []string{"deploy with make " + m.id})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.PutMemory(ctx, imprint.Memory{ID: m.id, Content: "deploy with make " + m.id, Type: imprint.MemoryEpisodic, Scope: scopeA,
			Workspace: m.ws, SessionID: "s", Version: 1, Embedder: emb.Name(), Vec: vs[0], SourceMessageIDs: []string{}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	s := search.Searcher{Store: db, Embedder: emb}
	for ws, want := range map[string][]string{"": {"a", "b", "c"}, "/src/site": {"b"}} {
		hits, err := s.Search(ctx, imprint.SearchQuery{Scope: scopeA, Text: "deploy with make", Kinds: []imprint.Kind{imprint.KindMemory}, Workspace: ws})
		if err != nil {
			t.Fatal(err)
		}
		got := hitIDs(hits)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("search in workspace %q = %v, want %v", ws, got, want)
		}
	}
}
