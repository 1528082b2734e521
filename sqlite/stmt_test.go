package sqlite

import (
	"errors"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestPutMemoryRewritesInPlace checks the write path's cached statements:
// writing an existing id rewrites its row and keyword index, another
// scope's id is refused and left alone, and a reopened store writes too.
func TestPutMemoryRewritesInPlace(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	ctx := t.Context()
	mine := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	other := imprint.Scope{Tenant: "t", User: "u", Agent: "b"}
	put := func(s imprint.Scope, content string, version int) error {
		return db.PutMemory(ctx, imprint.Memory{ID: "m1", Content: content, Type: imprint.MemoryPersona, Scope: s,
			Version: version, Priority: 10 * version, SceneName: "scene", Embedder: "e"}, nil)
	}
	find := func(q string) int {
		hits, err := db.SearchText(ctx, imprint.TextQuery{Scope: mine, Kind: imprint.KindMemory, Text: q})
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}
	for i, content := range []string{"User lives in Porto", "User lives in Lisbon", "User lives in Faro"} {
		if err := put(mine, content, i+1); err != nil {
			t.Fatal(err)
		}
	}
	if err := put(other, "stolen", 9); !errors.Is(err, imprint.ErrConflict) {
		t.Errorf("rewrite from another scope: err = %v, want ErrConflict", err)
	}
	got, err := db.GetMemory(ctx, mine, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != "User lives in Faro" || got.Version != 3 || got.Priority != 30 || got.SceneName != "scene" {
		t.Errorf("memory after rewrites = %q v%d p%d %q", got.Content, got.Version, got.Priority, got.SceneName)
	}
	if n := find("porto lisbon stolen"); n != 0 {
		t.Errorf("old or refused words still found: %d hits", n)
	}
	if n := find("faro"); n != 1 {
		t.Errorf("new words found %d times, want 1", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := put(mine, "User lives in Braga", 4); err != nil {
		t.Fatal(err)
	}
	if n := find("braga"); n != 1 {
		t.Errorf("after reopen, new words found %d times, want 1", n)
	}
}
