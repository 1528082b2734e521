package capture

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// Per-step capture into a real SQLite store.
func TestCapturePerStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	srv, m := newLLM(t)
	srv.Script(OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.8, "usable": true, "reason": "concrete"}))
	var events eventLog
	r := NewRunner(Deps{Store: db, LLM: m, Embedder: embedding.NewHash(), Events: &events}, config(func(c *Config) { c.BatchMode, c.LLMConcurrency = BatchPerStep, 2 }))

	ep := episode(
		U("list the files", 0), AR("", "I chose the shell tool because it's the cheapest.", 10), T("shell", `{"cmd":"ls"}`, "a.txt\nb.txt", 20), A("Two files.", 30),
		U("thanks", 40), A("You're welcome.", 50),
	)
	res, err := r.Run(ctx, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{EventStarted, EventDone}, events.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if res.LLMCalls != (LLMCalls{AlphaScoring: 1}) || len(res.Warnings) != 0 {
		t.Errorf("llm_calls %+v warnings %+v", res.LLMCalls, res.Warnings)
	}
	if len(srv.RequestsFor(OpAlpha)) != 1 {
		t.Errorf("%d alpha requests, want 1 (only step 0 has a reflection)", len(srv.RequestsFor(OpAlpha)))
	}
	stored, err := db.ListTraces(ctx, imprint.DefaultScope(), imprint.TraceFilter{EpisodeID: "ep-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 2 {
		t.Fatalf("%d stored traces, want 2", len(stored))
	}
	s0 := stored[0]
	if s0.ID != res.TraceIDs[0] || s0.UserText != "list the files" || s0.AgentText != "Two files." || len(s0.ToolCalls) != 1 ||
		s0.ToolCalls[0].Output != "a.txt\nb.txt" || s0.Alpha != 0.8 || !s0.Usable || deref(s0.Reflection) != "I chose the shell tool because it's the cheapest." ||
		s0.ReflectionSource != imprint.ReflectionAdapter || s0.Priority != 0 || s0.Value != 0 || s0.RHuman != nil || !s0.HasVecSummary || !s0.HasVecAction {
		t.Errorf("stored step 0: %+v", s0)
	}
	if !s0.TS.Equal(at(30).Time) || !stored[1].TS.After(s0.TS.Time) {
		t.Errorf("trace times %v %v, want the steps' last turns", s0.TS, stored[1].TS)
	}
	if stored[1].Reflection != nil || stored[1].Alpha != 0 || stored[1].Usable {
		t.Errorf("stored step 1 without reflection: %+v", stored[1])
	}
	got, err := db.GetEpisode(ctx, imprint.DefaultScope(), "ep-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.TraceIDs, got.TraceIDs); diff != "" {
		t.Errorf("episode trace ids (-result +stored):\n%s", diff)
	}
	if got.Status != imprint.EpisodeFinalized {
		t.Errorf("episode status %s", got.Status)
	}
}

// The result's JSON has exactly the keys of CONTRACTS §5.1.
func TestResultJSON(t *testing.T) {
	t.Parallel()
	res, err := NewRunner(Deps{}, DefaultConfig()).Run(context.Background(), episode(U("q", 0), A("a", 10)), "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"episode_id", "session_id", "closed_by", "trace_ids", "traces", "llm_calls", "stage_ms", "warnings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("result lacks %q", k)
		}
	}
	var traces []map[string]json.RawMessage
	json.Unmarshal(m["traces"], &traces)
	for _, k := range []string{"id", "episode_id", "step_key", "ts", "user_text", "agent_text", "tool_calls", "reflection", "reflection_source",
		"alpha", "usable", "value", "priority", "r_human", "depth", "is_subagent", "truncated", "has_vec_summary", "has_vec_action"} {
		if _, ok := traces[0][k]; !ok {
			t.Errorf("trace lacks %q", k)
		}
	}
	if string(traces[0]["reflection"]) != "null" || string(traces[0]["r_human"]) != "null" || string(traces[0]["tool_calls"]) != "[]" || string(m["warnings"]) != "[]" {
		t.Errorf("trace %s", b)
	}
	for _, k := range []string{"reflection_synth", "alpha_scoring", "batched_reflection"} {
		if !strings.Contains(string(m["llm_calls"]), `"`+k+`"`) {
			t.Errorf("llm_calls lacks %q", k)
		}
	}
	for _, k := range []string{"extract", "normalize", "reflect", "alpha", "embed", "persist"} {
		if !strings.Contains(string(m["stage_ms"]), `"`+k+`"`) {
			t.Errorf("stage_ms lacks %q", k)
		}
	}
}

func TestCaptureIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	r := NewRunner(Deps{Store: db, Embedder: embedding.NewHash()}, DefaultConfig())
	ep := exchanges(3, true)
	ep.ID = ""
	first, err := r.Run(ctx, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Run(ctx, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	if first.EpisodeID == "" || first.EpisodeID != second.EpisodeID {
		t.Errorf("derived episode ids %q, %q", first.EpisodeID, second.EpisodeID)
	}
	if diff := cmp.Diff(first.TraceIDs, second.TraceIDs); diff != "" {
		t.Errorf("trace ids changed (-first +second):\n%s", diff)
	}
	stored, err := db.ListTraces(ctx, imprint.DefaultScope(), imprint.TraceFilter{EpisodeID: first.EpisodeID})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 {
		t.Errorf("%d traces after two captures, want 3", len(stored))
	}
	// The episode shrinks: the vanished step's trace is removed.
	ep.Turns = ep.Turns[:4]
	third, err := r.Run(ctx, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	stored, _ = db.ListTraces(ctx, imprint.DefaultScope(), imprint.TraceFilter{EpisodeID: third.EpisodeID})
	if len(stored) != 2 || stored[0].ID != first.TraceIDs[0] || stored[1].ID != first.TraceIDs[1] {
		t.Errorf("after shrinking: %d traces", len(stored))
	}
}

func TestCaptureInvalidInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	r := NewRunner(Deps{Store: db}, DefaultConfig())
	tests := []struct {
		name  string
		ep    imprint.Episode
		by    imprint.ClosedBy
		field string
	}{
		{"no session", imprint.Episode{ID: "x", Turns: []imprint.Turn{U("q", 0)}}, "", "session_id"},
		{"bad role", episode(U("q", 0), imprint.Turn{Role: "robot", Content: "beep"}), "", "turns[1].role"},
		{"bad closed_by", episode(U("q", 0)), "exploded", "closed_by"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := r.Run(ctx, tt.ep, tt.by)
			if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %v, want ErrInvalid naming %s", err, tt.field)
			}
		})
	}
	if _, err := db.GetEpisode(ctx, imprint.DefaultScope(), "ep-1"); !errors.Is(err, imprint.ErrNotFound) {
		t.Errorf("an invalid episode was stored: %v", err)
	}
}

func TestCaptureAbandoned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	ep := episode(U("q", 0), A("a", 10))
	res, err := NewRunner(Deps{Store: db}, config(func(c *Config) { c.CaptureAbandoned = false })).Run(ctx, ep, imprint.ClosedAbandoned)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traces) != 0 || len(res.Warnings) != 1 || res.Warnings[0] != (Warning{Stage: "capture", Code: CodeAbandonedSkipped, Message: res.Warnings[0].Message}) {
		t.Errorf("result %+v", res)
	}
	if _, err := db.GetEpisode(ctx, imprint.DefaultScope(), "ep-1"); !errors.Is(err, imprint.ErrNotFound) {
		t.Errorf("skipped episode was stored: %v", err)
	}
	res, err = NewRunner(Deps{Store: db}, DefaultConfig()).Run(ctx, ep, imprint.ClosedAbandoned)
	if err != nil || len(res.Traces) != 1 || res.ClosedBy != imprint.ClosedAbandoned {
		t.Fatalf("abandoned capture: %+v, %v", res, err)
	}
	got, _ := db.GetEpisode(ctx, imprint.DefaultScope(), "ep-1")
	if got.Status != imprint.EpisodeAbandoned {
		t.Errorf("status %s, want abandoned", got.Status)
	}
}

func TestCaptureStoreFailure(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	db.Close()
	var events eventLog
	_, err := NewRunner(Deps{Store: db, Events: &events}, DefaultConfig()).Run(context.Background(), episode(U("q", 0), A("a", 10)), "")
	if err == nil {
		t.Fatal("no error from a closed store")
	}
	evs := events.all()
	if len(evs) != 2 || evs[1].Kind != EventFailed || evs[1].Stage != "persist" || evs[1].EpisodeID != "ep-1" || evs[1].Err == nil {
		t.Fatalf("events %+v, want started then failed", evs)
	}
	b, _ := json.Marshal(evs[1])
	if !strings.Contains(string(b), `"stage":"persist"`) || !strings.Contains(string(b), `"code":`) {
		t.Errorf("failed event JSON %s", b)
	}
}

func TestCaptureConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	r := NewRunner(Deps{Store: db}, DefaultConfig())
	if _, err := r.Run(ctx, episode(U("q", 0), A("a", 10)), ""); err != nil {
		t.Fatal(err)
	}
	other := episode(U("q", 0), A("a", 10))
	other.Scope = imprint.Scope{Tenant: "t2", User: "u", Agent: "a"}
	if _, err := r.Run(ctx, other, ""); !errors.Is(err, imprint.ErrConflict) {
		t.Errorf("error %v, want ErrConflict", err)
	}
}

func TestCaptureEmptyAndTimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	r := NewRunner(Deps{Store: db}, DefaultConfig())
	res, err := r.Run(ctx, imprint.Episode{ID: "empty", SessionID: "s"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traces) != 0 || len(res.Warnings) != 1 || res.Warnings[0].Code != CodeNoSteps {
		t.Errorf("empty episode result %+v", res)
	}
	// Turns without a time take their predecessor's.
	ep := imprint.Episode{ID: "untimed", SessionID: "s", Turns: []imprint.Turn{
		U("q", 0), {Role: imprint.RoleAssistant, Content: "a"},
	}}
	res, err = r.Run(ctx, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Traces[0].TS.Equal(at(0).Time) {
		t.Errorf("trace ts %v, want the user turn's", res.Traces[0].TS)
	}
}

func TestDeriveEpisodeID(t *testing.T) {
	t.Parallel()
	a := episode(U("hello", 0), A("hi", 10))
	a.ID = ""
	b := a
	b.Turns = append([]imprint.Turn{S("system prompt", 0)}, a.Turns...)
	c := a
	c.Scope = imprint.Scope{Tenant: "other"}
	d := a
	d.SessionID = "se-2"
	if DeriveEpisodeID(a) != DeriveEpisodeID(b) {
		t.Error("a system turn changed the derived id")
	}
	if DeriveEpisodeID(a) == DeriveEpisodeID(c) || DeriveEpisodeID(a) == DeriveEpisodeID(d) {
		t.Error("scope or session did not change the derived id")
	}
	if TraceID("e", "0") == TraceID("e", "1") || TraceID("e", "0") != TraceID("e", "0") {
		t.Error("trace ids are not deterministic per step")
	}
}

// TestDerivedIDsAreStable pins derived ids: a change would give every
// re-captured episode and trace a new id, duplicating them in the store.
func TestDerivedIDsAreStable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, got, want string }{
		{"trace", TraceID("ep-1", "3"), "b39c6d5d-d2b6-8c25-87d6-0b03717aab05"},
		{"episode", DeriveEpisodeID(exchanges(2, false)), "208bf295-26a1-8e5c-aa45-bdab45d25928"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s id = %s, want %s", tt.name, tt.got, tt.want)
		}
	}
}
