package mcp_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/mcp"
)

func TestListTools(t *testing.T) {
	t.Parallel()
	cs := newStack(t).connect(t, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		tools[tl.Name] = tl
	}
	for _, c := range []struct {
		name        string
		readOnly    bool
		destructive bool
		required    []string
	}{
		{"search", true, false, []string{"query"}},
		{"recall", true, false, nil},
		{"list_memories", true, false, nil},
		{"list_traces", true, false, nil},
		{"record_messages", false, false, []string{"session_id", "messages"}},
		{"end_session", false, false, []string{"session_id"}},
	} {
		tl := tools[c.name]
		if tl == nil {
			t.Errorf("tool %s is not listed", c.name)
			continue
		}
		a := tl.Annotations
		if a == nil || a.ReadOnlyHint != c.readOnly || a.DestructiveHint == nil || *a.DestructiveHint != c.destructive {
			t.Errorf("%s annotations %+v: want read-only %v, destructive %v", c.name, a, c.readOnly, c.destructive)
		}
		if tl.InputSchema == nil || tl.OutputSchema == nil {
			t.Errorf("%s has no input or output schema", c.name)
			continue
		}
		in := tl.InputSchema.(map[string]any)
		var req []string
		for _, r := range asSlice(in["required"]) {
			req = append(req, r.(string))
		}
		slices.Sort(req)
		want := slices.Clone(c.required)
		slices.Sort(want)
		if !slices.Equal(req, want) {
			t.Errorf("%s requires %v, want %v", c.name, req, want)
		}
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestConversationToMemory is the path of a host that pushes its
// conversation: record it, end the session (extracted in process), and
// the memory is listed, found and recalled, with its provenance.
func TestConversationToMemory(t *testing.T) {
	t.Parallel()
	st := newStack(t)
	cs := st.connect(t, nil)
	rec := structured[imprint.RecordResult](t, callTool(t, cs, "record_messages", map[string]any{
		"session_id": "chat-1",
		"messages": []map[string]any{
			{"id": "m1", "role": "user", "content": "I am allergic to peanuts, please remember that.", "timestamp": "2026-05-01T10:00:00Z"},
			{"id": "m2", "role": "assistant", "content": "Noted: no peanuts in any recipe I suggest."},
		},
	}))
	if rec.RecordedCount != 2 || !slices.Equal(rec.MessageIDs, []string{"m1", "m2"}) {
		t.Fatalf("recorded %+v, want m1 and m2", rec)
	}
	again := structured[imprint.RecordResult](t, callTool(t, cs, "record_messages", map[string]any{
		"session_id": "chat-1", "messages": []map[string]any{{"id": "m1", "role": "user", "content": "I am allergic to peanuts, please remember that."}},
	}))
	if again.RecordedCount != 0 || len(again.Skipped) != 1 {
		t.Fatalf("recording m1 again: %+v, want it skipped", again)
	}

	end := structured[mcp.SessionEnd](t, callTool(t, cs, "end_session", map[string]any{"session_id": "chat-1"}))
	if !end.Extracted || end.PendingMessages != 2 || end.MemoriesStored == 0 {
		t.Fatalf("end_session %+v: want 2 pending messages extracted into memories", end)
	}

	mems := structured[struct{ Memories []imprint.Memory }](t, callTool(t, cs, "list_memories", map[string]any{"session_id": "chat-1"}))
	if len(mems.Memories) == 0 || !strings.Contains(strings.ToLower(mems.Memories[0].Content), "peanut") {
		t.Fatalf("list_memories of chat-1: %+v", mems.Memories)
	}
	m := mems.Memories[0]
	if !slices.Contains(m.SourceMessageIDs, "m1") {
		t.Errorf("memory %q has sources %v, want m1", m.Content, m.SourceMessageIDs)
	}

	hits := structured[struct{ Hits []imprint.Hit }](t, callTool(t, cs, "search", map[string]any{"query": "peanuts allergy", "kind": "memory"}))
	if len(hits.Hits) == 0 || hits.Hits[0].ID != m.ID || !slices.Contains(hits.Hits[0].SourceMessageIDs, "m1") {
		t.Fatalf("search peanuts: %+v, want memory %s with its source m1", hits.Hits, m.ID)
	}
	all := structured[struct{ Hits []imprint.Hit }](t, callTool(t, cs, "search", map[string]any{"query": "peanuts"}))
	var kinds []imprint.Kind
	for _, h := range all.Hits {
		kinds = append(kinds, h.Kind)
	}
	if !slices.Contains(kinds, imprint.KindMessage) || !slices.Contains(kinds, imprint.KindMemory) {
		t.Errorf("search of every kind found %v, want the memory and the messages", kinds)
	}

	rc := structured[imprint.RecallResult](t, callTool(t, cs, "recall", map[string]any{"query": "what can I cook for dinner with peanuts?", "session_id": "chat-1"}))
	if !strings.Contains(strings.ToLower(rc.Context), "peanut") || len(rc.Hits) == 0 {
		t.Fatalf("recall: %+v, want the peanut memory in the block", rc)
	}
}

func TestListTraces(t *testing.T) {
	t.Parallel()
	st := newStack(t)
	tr := st.putTrace(t, "ep-1", "book a flight to Lisbon", "searched flights and booked TP123", "the cheapest direct flight was best")
	st.putTrace(t, "ep-2", "water the plants", "set a reminder", "reminders work", "/work/garden")
	cs := st.connect(t, nil)

	byEp := structured[struct{ Traces []imprint.Trace }](t, callTool(t, cs, "list_traces", map[string]any{"episode_id": "ep-1"}))
	if len(byEp.Traces) != 1 || byEp.Traces[0].ID != tr.ID || byEp.Traces[0].Reflection == nil ||
		*byEp.Traces[0].Reflection != "the cheapest direct flight was best" || byEp.Traces[0].Alpha != 0.8 {
		t.Fatalf("list_traces ep-1: %+v", byEp.Traces)
	}
	byQuery := structured[struct{ Traces []imprint.Trace }](t, callTool(t, cs, "list_traces", map[string]any{"query": "flight Lisbon"}))
	if len(byQuery.Traces) == 0 || byQuery.Traces[0].ID != tr.ID {
		t.Fatalf("list_traces query flight: %+v", byQuery.Traces)
	}
	garden := structured[struct{ Traces []imprint.Trace }](t, callTool(t, cs, "list_traces", map[string]any{"workspace": "/work/garden"}))
	if len(garden.Traces) != 1 || garden.Traces[0].EpisodeID != "ep-2" {
		t.Fatalf("list_traces in /work/garden: %+v", garden.Traces)
	}
	// A missing episode is a not_found tool error, not an empty list, with
	// or without a query.
	wantToolError(t, callTool(t, cs, "list_traces", map[string]any{"episode_id": "ep-missing"}), "not_found", "ep-missing")
	wantToolError(t, callTool(t, cs, "list_traces", map[string]any{"episode_id": "nope", "query": "flight"}), "not_found", "nope")
}

// TestBadArguments: every bad argument is a tool error naming it, never a
// protocol failure.
func TestBadArguments(t *testing.T) {
	t.Parallel()
	cs := newStack(t).connect(t, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search", map[string]any{}, "query"},
		{"search", map[string]any{"query": "   "}, "query"},
		{"search", map[string]any{"query": 42}, "query"},
		{"search", map[string]any{"query": "x", "kind": "everything"}, "kind"},
		{"search", map[string]any{"query": "x", "limit": 1000}, "limit"},
		{"search", map[string]any{"query": "x", "limit": -1}, "limit"},
		{"search", map[string]any{"query": "x", "session_id": "a\nb"}, "session_id"},
		{"search", map[string]any{"query": "x", "bogus": 1}, "bogus"},
		{"recall", map[string]any{"budget_tokens": -5}, "budget_tokens"},
		{"recall", map[string]any{"budget_tokens": "many"}, "budget_tokens"},
		{"list_memories", map[string]any{"type": "secret"}, "type"},
		{"list_memories", map[string]any{"limit": 101}, "limit"},
		{"list_traces", map[string]any{"episode_id": strings.Repeat("e", 300)}, "episode_id"},
		{"record_messages", map[string]any{"messages": []any{}}, "session_id"},
		{"record_messages", map[string]any{"session_id": "s", "messages": []any{}}, "messages"},
		{"record_messages", map[string]any{"session_id": "s", "messages": []any{map[string]any{"role": "user"}}}, "content"},
		{"record_messages", map[string]any{"session_id": "s", "messages": []any{
			map[string]any{"role": "user", "content": "hi"}, map[string]any{"role": "robot", "content": "beep"}}}, "messages[1].role"},
		{"record_messages", map[string]any{"session_id": "s", "messages": []any{
			map[string]any{"role": "user", "content": "hi", "timestamp": "yesterday"}}}, "messages[0].timestamp"},
		{"end_session", map[string]any{"session_id": ""}, "session_id"},
	} {
		t.Run(c.tool+"/"+c.want, func(t *testing.T) {
			wantToolError(t, callTool(t, cs, c.tool, c.args), c.want)
		})
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Error("an unknown tool answered")
	}
}
