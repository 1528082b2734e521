package mcp_test

import (
	"context"
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

// TestRootWorkspaceRecordAndRecall: messages recorded in a session with a
// folder root belong to its workspace; search covers every workspace
// unless given one; recall there leaves out other workspaces' memories but
// keeps the workspace-less ones.
func TestRootWorkspaceRecordAndRecall(t *testing.T) {
	t.Parallel()
	st := newStack(t)
	st.putMemory(t, "m-shop", "the oven of the shop needs descaling every week", imprint.MemoryEpisodic, "/work/tea-shop")
	st.putMemory(t, "m-bakery", "the oven of the bakery needs a new thermostat", imprint.MemoryEpisodic, "/work/bakery")
	st.putMemory(t, "m-global", "Ana wants answers about the oven kept short", imprint.MemoryPersona)
	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil)
	client.AddRoots(&sdk.Root{URI: "file:///work/tea-shop"})
	cs := st.connectClient(t, client)

	structured[imprint.RecordResult](t, callTool(t, cs, "record_messages", map[string]any{
		"session_id": "s-ws", "messages": []any{map[string]any{"id": "m1", "role": "user", "content": "the shop opens at nine"}}}))
	m, err := st.db.GetMessage(context.Background(), st.scope, "s-ws", "m1")
	if err != nil || m.Workspace != "/work/tea-shop" {
		t.Fatalf("recorded message %+v %v, want it in /work/tea-shop", m, err)
	}

	hits := structured[struct{ Hits []imprint.Hit }](t, callTool(t, cs, "search", map[string]any{"query": "oven", "kind": "memory", "workspace": "/work/bakery"}))
	if len(hits.Hits) != 1 || hits.Hits[0].ID != "m-bakery" {
		t.Fatalf("search in /work/bakery: %+v, want m-bakery only", hits.Hits)
	}
	all := structured[struct{ Hits []imprint.Hit }](t, callTool(t, cs, "search", map[string]any{"query": "oven", "kind": "memory"}))
	if len(all.Hits) != 3 {
		t.Fatalf("search of every workspace: %+v, want the 3 memories", all.Hits)
	}

	rc := structured[imprint.RecallResult](t, callTool(t, cs, "recall", map[string]any{"query": "what about the oven?"}))
	ids := map[string]bool{}
	for _, h := range rc.Hits {
		ids[h.ID] = true
	}
	if !ids["m-shop"] || !ids["m-global"] || ids["m-bakery"] {
		t.Fatalf("recall in /work/tea-shop found %v, want m-shop and m-global, not m-bakery", ids)
	}
}
