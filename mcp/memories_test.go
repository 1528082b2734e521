package mcp_test

import (
	"context"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestRememberForget: a fact remembered by hand is found, shown with its
// history, deduplicated when remembered again, forgotten (gone from search
// but still shown, marked) and purged only when asked.
func TestRememberForget(t *testing.T) {
	t.Parallel()
	st := newStack(t)
	cs := st.connect(t, nil)

	rem := structured[imprint.RememberResult](t, callTool(t, cs, "remember", map[string]any{"text": "Ana's cat is called Miso.", "type": "persona"}))
	if rem.Action != imprint.RememberStored || rem.Memory.ID == "" || rem.Memory.Type != imprint.MemoryPersona ||
		rem.Memory.Extractor != imprint.ExtractorManual || rem.Memory.Scope.User != st.scope.User {
		t.Fatalf("remember: %+v", rem)
	}
	again := structured[imprint.RememberResult](t, callTool(t, cs, "remember", map[string]any{"text": "Ana's cat is called Miso."}))
	if again.Action != imprint.RememberDuplicate || again.Memory.ID != rem.Memory.ID {
		t.Fatalf("remember again: %+v, want the duplicate %s", again, rem.Memory.ID)
	}
	hits := structured[struct{ Hits []imprint.Hit }](t, callTool(t, cs, "search", map[string]any{"query": "cat name Miso", "kind": "memory"}))
	if len(hits.Hits) == 0 || hits.Hits[0].ID != rem.Memory.ID {
		t.Fatalf("search after remember: %+v", hits.Hits)
	}
	shown := structured[imprint.MemoryDetail](t, callTool(t, cs, "get_memory", map[string]any{"id": rem.Memory.ID}))
	if shown.ID != rem.Memory.ID || shown.Content != rem.Memory.Content || shown.History == nil || shown.Sources == nil {
		t.Fatalf("get_memory: %+v", shown)
	}

	type forgetOut struct {
		Action string
		Memory *imprint.Memory
		Purged *imprint.PurgeResult
	}
	f := structured[forgetOut](t, callTool(t, cs, "forget", map[string]any{"id": rem.Memory.ID}))
	if f.Action != "forget" || f.Memory == nil || f.Memory.ForgottenAt == nil {
		t.Fatalf("forget: %+v", f)
	}
	hits = structured[struct{ Hits []imprint.Hit }](t, callTool(t, cs, "search", map[string]any{"query": "cat name Miso", "kind": "memory"}))
	if len(hits.Hits) != 0 {
		t.Fatalf("a forgotten memory is still found: %+v", hits.Hits)
	}
	mems := structured[struct{ Memories []imprint.Memory }](t, callTool(t, cs, "list_memories", map[string]any{}))
	if len(mems.Memories) != 0 {
		t.Fatalf("a forgotten memory is still listed: %+v", mems.Memories)
	}
	shown = structured[imprint.MemoryDetail](t, callTool(t, cs, "get_memory", map[string]any{"id": rem.Memory.ID}))
	if shown.ForgottenAt == nil {
		t.Fatalf("get_memory of a forgotten memory: %+v, want it marked forgotten", shown.Memory)
	}

	p := structured[forgetOut](t, callTool(t, cs, "forget", map[string]any{"id": rem.Memory.ID, "purge": true}))
	if p.Action != "purge" || p.Purged == nil || len(p.Purged.MemoryIDs) != 1 || p.Purged.MemoryIDs[0] != rem.Memory.ID {
		t.Fatalf("purge: %+v", p)
	}
	wantToolError(t, callTool(t, cs, "get_memory", map[string]any{"id": rem.Memory.ID}), "not_found")
	if _, err := st.db.GetMemory(context.Background(), st.scope, rem.Memory.ID); err == nil {
		t.Fatal("a purged memory is still in the store")
	}
}

func TestMemoryToolErrors(t *testing.T) {
	t.Parallel()
	st := newStack(t)
	other := st.scope
	st.scope = imprint.Scope{Tenant: "acme", User: "bob", Agent: "default"}
	bob := st.putMemory(t, "m-bob", "bob likes jazz", imprint.MemoryPersona)
	st.scope = other
	cs := st.connect(t, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"remember", map[string]any{}, []string{"text"}},
		{"remember", map[string]any{"text": "  "}, []string{"text"}},
		{"remember", map[string]any{"text": "x y z", "type": "secret"}, []string{"type"}},
		{"forget", map[string]any{}, []string{"id"}},
		{"forget", map[string]any{"id": "a\tb"}, []string{"id"}},
		{"forget", map[string]any{"id": "m1", "with_sources": true}, []string{"with_sources"}},
		{"forget", map[string]any{"id": "no-such-memory"}, []string{"not_found"}},
		{"forget", map[string]any{"id": bob.ID}, []string{"not_found"}},
		{"get_memory", map[string]any{"id": bob.ID}, []string{"not_found"}},
		{"get_memory", map[string]any{"id": strings.Repeat("x", 257)}, []string{"id"}},
	} {
		t.Run(c.tool+"/"+strings.Join(c.want, ","), func(t *testing.T) {
			wantToolError(t, callTool(t, cs, c.tool, c.args), c.want...)
		})
	}
	if m, err := st.db.GetMemory(context.Background(), bob.Scope, bob.ID); err != nil || m.ForgottenAt != nil {
		t.Fatalf("bob's memory after ann's forget: %+v %v", m, err)
	}
}
