package sqlite

import (
	"context"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

func TestHasLiveMemoryHash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	sc := imprint.DefaultScope()
	other := imprint.Scope{Tenant: "t", User: "bob", Agent: "a"}
	now := imprint.Now()
	put := func(id, hash string, supersede ...string) {
		t.Helper()
		m := imprint.Memory{ID: id, Scope: sc, SessionID: "s", Content: "content " + id, ContentHash: hash, Type: imprint.MemoryPersona,
			Version: 1, Extractor: imprint.ExtractorHeuristic, CreatedAt: now, UpdatedAt: now}
		if err := db.PutMemory(ctx, m, supersede); err != nil {
			t.Fatal(err)
		}
	}
	put("m1", "h-old")
	put("m2", "h-new", "m1") // m1 is superseded
	put("m3", "h-live")
	for _, tc := range []struct {
		scope imprint.Scope
		hash  string
		want  bool
	}{
		{sc, "h-live", true},
		{sc, "h-new", true},
		{sc, "h-old", false},
		{sc, "h-unknown", false},
		{sc, "", false},
		{other, "h-live", false},
	} {
		got, err := db.HasLiveMemoryHash(ctx, tc.scope, tc.hash)
		if err != nil {
			t.Fatal(err)
		}
		// The answer is FindMemoryByHash's.
		found, err := db.FindMemoryByHash(ctx, tc.scope, tc.hash)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want || got != (len(found) > 0) {
			t.Errorf("HasLiveMemoryHash(%s, %q) = %v, want %v (FindMemoryByHash found %d)", tc.scope, tc.hash, got, tc.want, len(found))
		}
	}
	if _, err := db.HasLiveMemoryHash(ctx, imprint.Scope{}, "h"); err == nil {
		t.Error("no error for an empty scope")
	}
}
