package mcp_test

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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

// TestRememberInRootWorkspace: a fact remembered in a session whose client
// offers a folder root belongs to that workspace; without roots, to none.
func TestRememberInRootWorkspace(t *testing.T) {
	t.Parallel()
	st := newStack(t)
	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil)
	client.AddRoots(&sdk.Root{URI: "file:///work/tea-shop"})
	cs := st.connectClient(t, client)
	rem := structured[imprint.RememberResult](t, callTool(t, cs, "remember", map[string]any{"text": "The tea shop's oven runs hot.", "type": "episodic"}))
	if rem.Memory.Workspace != "/work/tea-shop" {
		t.Fatalf("remembered in workspace %q, want /work/tea-shop", rem.Memory.Workspace)
	}
	plain := structured[imprint.RememberResult](t, callTool(t, st.connect(t, nil), "remember", map[string]any{"text": "Ana drinks oolong.", "type": "persona"}))
	if plain.Memory.Workspace != "" {
		t.Fatalf("remembered without roots in workspace %q", plain.Memory.Workspace)
	}
	got := structured[struct{ Memories []imprint.Memory }](t, callTool(t, cs, "list_memories", map[string]any{"workspace": "/work/tea-shop"}))
	if len(got.Memories) != 1 || got.Memories[0].ID != rem.Memory.ID {
		t.Fatalf("list_memories in the root's workspace: %+v", got.Memories)
	}
}
