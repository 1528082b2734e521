package capture

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	imprint "github.com/imprint-dev/imprint"
)

func TestExtractSteps(t *testing.T) {
	t.Parallel()
	dur := func(ms int64) *int64 { return &ms }
	timed := T("shell", `{"cmd":"ls"}`, "/a\n/b\n", 60)
	timed.Meta.StartedAt, timed.Meta.EndedAt = at(55), at(60)
	sub := A("sub-agent done", 50)
	sub.Meta.Depth, sub.Meta.IsSubagent = 2, true
	errTool := T("book", `{"id":1}`, "", 70)
	errTool.Meta.Error, errTool.Meta.ErrorCode, errTool.Meta.ToolCallID = "not enough seats", "E_SEATS", "call_1"

	tests := []struct {
		name string
		ep   imprint.Episode
		want []Step
	}{
		{
			name: "user then assistant",
			ep:   episode(U("write the readme", 0), A("here is the readme", 100)),
			want: []Step{{Key: "0", Index: 0, TS: at(100), UserText: "write the readme", AgentText: "here is the readme"}},
		},
		{
			name: "tool turns merge into the assistant step, with timing",
			ep:   episode(U("ls", 0), A("running ls", 50), timed, A("done", 70)),
			want: []Step{{Key: "0", TS: at(70), UserText: "ls", AgentText: "running ls\n\ndone",
				ToolCalls: []imprint.ToolCall{{Name: "shell", Input: json.RawMessage(`{"cmd":"ls"}`), Output: "/a\n/b\n",
					StartedAt: at(55), EndedAt: at(60), DurationMS: dur(5)}}}},
		},
		{
			name: "assistant with empty content keeps its calls and the error",
			ep:   episode(U("book it", 0), A("", 50), errTool, A("Sorry, the flight is full.", 80)),
			want: []Step{{Key: "0", TS: at(80), UserText: "book it", AgentText: "Sorry, the flight is full.",
				ToolCalls: []imprint.ToolCall{{Name: "book", Input: json.RawMessage(`{"id":1}`), Error: "not enough seats",
					ErrorCode: "E_SEATS", ToolCallID: "call_1"}}}},
		},
		{
			name: "tool turn before the assistant is an observation",
			ep:   episode(U("check the build", 0), T("ci", `{}`, "3 tests failed", 10), A("I will fix them", 20)),
			want: []Step{{Key: "0", TS: at(20), UserText: "check the build\n[observation ci] 3 tests failed", AgentText: "I will fix them"}},
		},
		{
			name: "tool turns before any assistant turn: observations in order, none in tool_calls",
			ep: func() imprint.Episode {
				failed := T("lint", `{}`, "", 12)
				failed.Meta.Error = "exit 2"
				return episode(U("check the build", 0), T("ci", `{}`, "3 tests failed\n", 10), failed,
					A("", 20), T("fix", `{"file":"a.go"}`, "patched", 30))
			}(),
			want: []Step{{Key: "0", TS: at(30), UserText: "check the build\n[observation ci] 3 tests failed\n[observation lint] error: exit 2",
				ToolCalls: []imprint.ToolCall{{Name: "fix", Input: json.RawMessage(`{"file":"a.go"}`), Output: "patched"}}}},
		},
		{
			name: "a tool turn opening the episode is the state of the first step",
			ep:   episode(T("clock", `{}`, "09:00", 0), A("Good morning.", 10)),
			want: []Step{{Key: "0", TS: at(10), UserText: "[observation clock] 09:00", AgentText: "Good morning."}},
		},
		{
			name: "assistant with empty content followed only by tool turns",
			ep:   episode(U("pwd?", 0), A("  ", 10), T("shell", `{"cmd":"pwd"}`, "/srv", 20)),
			want: []Step{{Key: "0", TS: at(20), UserText: "pwd?",
				ToolCalls: []imprint.ToolCall{{Name: "shell", Input: json.RawMessage(`{"cmd":"pwd"}`), Output: "/srv"}}}},
		},
		{
			name: "a user turn after a tool turn opens a new segment",
			ep:   episode(U("a", 0), A("x", 10), T("t", `{}`, "o", 20), U("b", 30), A("y", 40)),
			want: []Step{
				{Key: "0", TS: at(20), UserText: "a", AgentText: "x", ToolCalls: []imprint.ToolCall{{Name: "t", Input: json.RawMessage(`{}`), Output: "o"}}},
				{Key: "1", Index: 1, TS: at(40), UserText: "b", AgentText: "y"},
			},
		},
		{
			name: "system turns between user turns keep them in one segment",
			ep:   episode(U("one", 0), S("note", 5), U("two", 10), S("note", 15), A("ok", 20)),
			want: []Step{{Key: "0", TS: at(20), UserText: "one\n\ntwo", AgentText: "ok"}},
		},
		{
			name: "user and tool turns without an assistant give one synthetic step",
			ep:   episode(S("sys", 0), U("first", 10), U("more", 20), T("t", `{}`, "o", 30), U("later", 40)),
			want: []Step{{Key: "0", TS: at(20), UserText: "first\n\nmore", Synthetic: true}},
		},
		{
			name: "only system and tool turns give nothing",
			ep:   episode(S("sys", 0), T("t", `{}`, "o", 10)),
			want: nil,
		},
		{
			name: "two exchanges are two steps",
			ep:   episode(U("first", 0), A("a1", 10), U("second", 20), A("a2", 30)),
			want: []Step{
				{Key: "0", Index: 0, TS: at(10), UserText: "first", AgentText: "a1"},
				{Key: "1", Index: 1, TS: at(30), UserText: "second", AgentText: "a2"},
			},
		},
		{
			name: "consecutive user turns merge; system turns are ignored",
			ep:   episode(U("hi", 0), S("tools: shell", 5), U("list files", 10), A("ok", 20)),
			want: []Step{{Key: "0", TS: at(20), UserText: "hi\n\nlist files", AgentText: "ok"}},
		},
		{
			name: "trailing user turn without a reply makes no step",
			ep:   episode(U("q", 0), A("a1", 10), U("thanks", 20)),
			want: []Step{{Key: "0", TS: at(10), UserText: "q", AgentText: "a1"}},
		},
		{
			name: "first non-empty reflection wins",
			ep:   episode(U("q", 0), AR("a", "  ", 10), AR("b", "I chose X because Y.", 20), AR("c", "later", 30)),
			want: []Step{{Key: "0", TS: at(30), UserText: "q", AgentText: "a\n\nb\n\nc", RawReflection: "I chose X because Y."}},
		},
		{
			name: "sub-agent depth and flag pass through",
			ep:   episode(U("delegate", 0), A("on it", 10), sub),
			want: []Step{{Key: "0", TS: at(50), UserText: "delegate", AgentText: "on it\n\nsub-agent done", Depth: 2, IsSubagent: true}},
		},
		{
			name: "episode meta depth is the floor",
			ep: func() imprint.Episode {
				e := episode(U("q", 0), A("a", 10))
				e.Meta.Depth, e.Meta.IsSubagent = 1, true
				return e
			}(),
			want: []Step{{Key: "0", TS: at(10), UserText: "q", AgentText: "a", Depth: 1, IsSubagent: true}},
		},
		{
			name: "user-only episode gives one synthetic step",
			ep:   episode(U("only me", 0)),
			want: []Step{{Key: "0", TS: at(0), UserText: "only me", Synthetic: true}},
		},
		{
			name: "empty episode gives nothing",
			ep:   episode(),
			want: nil,
		},
		{
			name: "step keys are segment positions",
			ep:   episode(U("a", 0), U("", 1), A("x", 2), U("lonely", 3), U("b", 4)),
			want: []Step{{Key: "0", TS: at(2), UserText: "a", AgentText: "x"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ExtractSteps(tt.ep)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExtractStepsSegmentPositions(t *testing.T) {
	t.Parallel()
	// The second segment has no assistant turn, so the third step keeps key "2".
	got := ExtractSteps(episode(U("a", 0), A("x", 1), U("b", 2), T("t", `{}`, "o", 3), U("c", 4), A("y", 5)))
	var keys []string
	for _, s := range got {
		keys = append(keys, s.Key)
	}
	if diff := cmp.Diff([]string{"0", "2"}, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}
