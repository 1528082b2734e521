package mcp_test

import (
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestListMemoriesWorkspace: the workspace argument narrows a listing.
func TestListMemoriesWorkspace(t *testing.T) {
	t.Parallel()
	st := newStack(t)
	for id, ws := range map[string]string{"m-shop": "/work/tea-shop", "m-bakery": "/work/bakery", "m-global": ""} {
		st.putMemory(t, id, "fact "+id, imprint.MemoryEpisodic, ws)
	}
	cs := st.connect(t, nil)
	got := structured[struct{ Memories []imprint.Memory }](t, callTool(t, cs, "list_memories", map[string]any{"workspace": "/work/tea-shop"}))
	if len(got.Memories) != 1 || got.Memories[0].ID != "m-shop" {
		t.Fatalf("list_memories in /work/tea-shop: %+v", got.Memories)
	}
	all := structured[struct{ Memories []imprint.Memory }](t, callTool(t, cs, "list_memories", map[string]any{}))
	if len(all.Memories) != 3 {
		t.Fatalf("list_memories of every workspace: %d memories, want 3", len(all.Memories))
	}
	wantToolError(t, callTool(t, cs, "list_memories", map[string]any{"workspace": "a\nb"}), "workspace")
}
