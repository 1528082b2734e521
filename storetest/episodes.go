package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"
	imprint "github.com/imprint-dev/imprint"
)

func episode(id string, scope imprint.Scope) imprint.Episode {
	reward := 1.0
	return imprint.Episode{
		ID: id, SessionID: "s1", Scope: scope, Status: imprint.EpisodeFinalized, ClosedBy: imprint.ClosedFinalized,
		Meta: imprint.EpisodeMeta{Reward: &reward, TaskID: "7", Source: "tau-bench"},
		Turns: []imprint.Turn{
			{Role: imprint.RoleUser, Content: "Change my flight to May 20", TS: at(0)},
			{Role: imprint.RoleAssistant, Content: "Let me look it up", TS: at(1), Meta: imprint.TurnMeta{Reflection: "check the reservation first"}},
			{Role: imprint.RoleTool, Content: `{"status":"ok"}`, TS: at(2), Meta: imprint.TurnMeta{Name: "get_reservation_details", Input: json.RawMessage(`{"reservation_id":"ABC123"}`)}},
		},
		StartedAt: at(0), EndedAt: at(2), CreatedAt: at(0), UpdatedAt: at(2),
	}
}

func steps(n int, tag string) []imprint.Trace {
	var out []imprint.Trace
	for i := range n {
		out = append(out, imprint.Trace{
			ID: fmt.Sprintf("%s-step-%d", tag, i), StepKey: fmt.Sprintf("%d", i), StepIndex: i, TS: at(i),
			UserText: fmt.Sprintf("user asks step %d", i), AgentText: fmt.Sprintf("agent answers step %d", i),
			ReflectionSource: imprint.ReflectionNone, Alpha: 0.5, Usable: true,
		})
	}
	return out
}

func testEpisodeRoundTrip(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	ep := episode("ep1", scopeA)
	must(t, s.SaveEpisode(ctx, ep))
	got, err := s.GetEpisode(ctx, scopeA, "ep1")
	must(t, err)
	if d := diff(ep, got); d != "" {
		t.Errorf("GetEpisode (-want +got):\n%s", d)
	}
	// An update replaces the fields but keeps the trace ids set by capture.
	must(t, s.SaveCapture(ctx, ep, steps(2, "ep1")))
	ep.Status, ep.ClosedBy = imprint.EpisodeAbandoned, imprint.ClosedAbandoned
	ep.Turns = ep.Turns[:1]
	ep.TraceIDs = nil
	must(t, s.SaveEpisode(ctx, ep))
	got, err = s.GetEpisode(ctx, scopeA, "ep1")
	must(t, err)
	if got.Status != imprint.EpisodeAbandoned || len(got.Turns) != 1 {
		t.Errorf("updated episode: status %q, %d turns", got.Status, len(got.Turns))
	}
	if d := diff([]string{"ep1-step-0", "ep1-step-1"}, got.TraceIDs); d != "" {
		t.Errorf("SaveEpisode changed the trace ids (-want +got):\n%s", d)
	}
	_, err = s.GetEpisode(ctx, scopeA, "missing")
	wantErr(t, "GetEpisode unknown", err, imprint.ErrNotFound)
	wantErr(t, "SaveEpisode without id", s.SaveEpisode(ctx, imprint.Episode{SessionID: "s", Scope: scopeA}), imprint.ErrInvalid)
}

func testEpisodeConflict(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	must(t, s.SaveEpisode(ctx, episode("shared-id", scopeA)))
	other := episode("shared-id", scopeB)
	other.Turns = other.Turns[:1]
	wantErr(t, "SaveEpisode with another scope's id", s.SaveEpisode(ctx, other), imprint.ErrConflict)
	got, err := s.GetEpisode(ctx, scopeA, "shared-id")
	must(t, err)
	if len(got.Turns) != 3 {
		t.Errorf("the conflicting save changed scope A's episode: %d turns", len(got.Turns))
	}
	_, err = s.GetEpisode(ctx, scopeB, "shared-id")
	wantErr(t, "GetEpisode by the conflicting scope", err, imprint.ErrNotFound)
}

func testSaveCaptureIdempotent(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	ep := episode("ep1", scopeA)
	tr := steps(3, "ep1")
	must(t, s.SaveCapture(ctx, ep, tr))
	first, err := s.ListTraces(ctx, scopeA, imprint.TraceFilter{EpisodeID: "ep1"})
	must(t, err)
	if d := diff([]string{"ep1-step-0", "ep1-step-1", "ep1-step-2"}, traceIDs(first)); d != "" {
		t.Fatalf("traces after the first capture (-want +got):\n%s", d)
	}
	must(t, s.SaveCapture(ctx, ep, tr))
	second, err := s.ListTraces(ctx, scopeA, imprint.TraceFilter{EpisodeID: "ep1"})
	must(t, err)
	if d := diff(first, second); d != "" {
		t.Errorf("capturing the same episode twice changed the rows (-first +second):\n%s", d)
	}
	got, err := s.GetEpisode(ctx, scopeA, "ep1")
	must(t, err)
	if d := diff(traceIDs(first), got.TraceIDs); d != "" {
		t.Errorf("episode trace ids (-want +got):\n%s", d)
	}
	// A changed step is updated in place.
	tr[1].AgentText = "agent answers step 1, revised"
	must(t, s.SaveCapture(ctx, ep, tr))
	t1, err := s.GetTrace(ctx, scopeA, "ep1-step-1")
	must(t, err)
	if t1.AgentText != "agent answers step 1, revised" {
		t.Errorf("upsert kept the old agent text %q", t1.AgentText)
	}
	all, err := s.ListTraces(ctx, scopeA, imprint.TraceFilter{})
	must(t, err)
	if len(all) != 3 {
		t.Errorf("%d traces after three captures of one episode, want 3", len(all))
	}
}

func testSaveCaptureVanished(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	ep := episode("ep1", scopeA)
	must(t, s.SaveCapture(ctx, ep, steps(3, "ep1")))
	must(t, s.SaveCapture(ctx, ep, steps(2, "ep1")))
	got, err := s.ListTraces(ctx, scopeA, imprint.TraceFilter{EpisodeID: "ep1"})
	must(t, err)
	if d := diff([]string{"ep1-step-0", "ep1-step-1"}, traceIDs(got)); d != "" {
		t.Errorf("traces after recapture with fewer steps (-want +got):\n%s", d)
	}
	_, err = s.GetTrace(ctx, scopeA, "ep1-step-2")
	wantErr(t, "GetTrace of a vanished step", err, imprint.ErrNotFound)
	e, err := s.GetEpisode(ctx, scopeA, "ep1")
	must(t, err)
	if d := diff([]string{"ep1-step-0", "ep1-step-1"}, e.TraceIDs); d != "" {
		t.Errorf("episode trace ids (-want +got):\n%s", d)
	}
	hits, err := s.SearchText(ctx, imprint.TextQuery{Scope: scopeA, Kind: imprint.KindTrace, Text: "step 2"})
	must(t, err)
	if contains(hitIDs(hits), "ep1-step-2") {
		t.Error("a vanished step is still found by SearchText")
	}
	// Zero traces clears the episode.
	must(t, s.SaveCapture(ctx, ep, nil))
	got, err = s.ListTraces(ctx, scopeA, imprint.TraceFilter{EpisodeID: "ep1"})
	must(t, err)
	if len(got) != 0 {
		t.Errorf("capture with no steps left %d traces", len(got))
	}
}

func testSaveCaptureConflict(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	must(t, s.SaveCapture(ctx, episode("ep1", scopeA), steps(2, "a")))
	err := s.SaveCapture(ctx, episode("ep1", scopeB), steps(3, "b"))
	wantErr(t, "SaveCapture of another scope's episode", err, imprint.ErrConflict)
	for _, sc := range []imprint.Scope{scopeA, scopeB} {
		got, err := s.ListTraces(ctx, sc, imprint.TraceFilter{})
		must(t, err)
		want := map[imprint.Scope][]string{scopeA: {"a-step-0", "a-step-1"}, scopeB: {}}[sc]
		if d := diff(want, traceIDs(got)); d != "" {
			t.Errorf("traces of %v after the conflict (-want +got):\n%s", sc, d)
		}
	}
	wantErr(t, "SaveCapture with an empty trace id",
		s.SaveCapture(ctx, episode("ep2", scopeA), []imprint.Trace{{StepKey: "0"}}), imprint.ErrInvalid)
}

func testTraceRoundTrip(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	refl := "I should confirm the date before rebooking."
	rh := 0.75
	dur := int64(1500)
	in := imprint.Trace{
		ID: "tr1", StepKey: "0", StepIndex: 0, TS: at(3),
		UserText: "Change my flight", AgentText: "Which date?",
		ToolCalls: []imprint.ToolCall{{Name: "search_direct_flight", Input: json.RawMessage(`{"origin":"JFK"}`),
			Output: "[]", Error: "none found", ErrorCode: "empty", ToolCallID: "call_1",
			StartedAt: at(2), EndedAt: at(3), DurationMS: &dur}},
		Reflection: &refl, ReflectionSource: imprint.ReflectionAdapter, Alpha: 0.8, Usable: true, Value: 0.3,
		Priority: 2.5, RHuman: &rh, Depth: 1, IsSubagent: true, Truncated: true,
		VecSummary: []float32{0.6, 0.8}, VecAction: []float32{1, 0}, Embedder: "e/2",
	}
	none := imprint.Trace{ID: "tr2", StepKey: "1", StepIndex: 1, UserText: "thanks", ReflectionSource: imprint.ReflectionNone}
	must(t, s.SaveCapture(ctx, episode("ep1", scopeA), []imprint.Trace{in, none}))
	got, err := s.GetTrace(ctx, scopeA, "tr1")
	must(t, err)
	want := in
	want.EpisodeID, want.SessionID, want.Scope = "ep1", "s1", scopeA
	want.HasVecSummary, want.HasVecAction = true, true
	if d := diff(want, got, cmpopts.IgnoreFields(imprint.Trace{}, "CreatedAt")); d != "" {
		t.Errorf("GetTrace (-want +got):\n%s", d)
	}
	if got.CreatedAt.IsZero() {
		t.Error("CreatedAt not set")
	}
	got2, err := s.GetTrace(ctx, scopeA, "tr2")
	must(t, err)
	if got2.Reflection != nil || got2.RHuman != nil || got2.HasVecSummary || got2.HasVecAction {
		t.Errorf("nullable fields of a bare trace: reflection %v, r_human %v, vectors %v/%v",
			got2.Reflection, got2.RHuman, got2.HasVecSummary, got2.HasVecAction)
	}
}

func testListTraces(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	ep1 := episode("ep1", scopeA)
	ep2 := episode("ep2", scopeA)
	ep2.SessionID, ep2.CreatedAt = "s2", at(60)
	must(t, s.SaveCapture(ctx, ep1, steps(3, "ep1")))
	must(t, s.SaveCapture(ctx, ep2, steps(2, "ep2")))
	all, err := s.ListTraces(ctx, scopeA, imprint.TraceFilter{})
	must(t, err)
	if d := diff([]string{"ep1-step-0", "ep1-step-1", "ep1-step-2", "ep2-step-0", "ep2-step-1"}, traceIDs(all)); d != "" {
		t.Errorf("ListTraces (-want +got):\n%s", d)
	}
	bySession, err := s.ListTraces(ctx, scopeA, imprint.TraceFilter{SessionID: "s2"})
	must(t, err)
	if d := diff([]string{"ep2-step-0", "ep2-step-1"}, traceIDs(bySession)); d != "" {
		t.Errorf("ListTraces session s2 (-want +got):\n%s", d)
	}
	limited, err := s.ListTraces(ctx, scopeA, imprint.TraceFilter{Limit: 2})
	must(t, err)
	if d := diff([]string{"ep1-step-0", "ep1-step-1"}, traceIDs(limited)); d != "" {
		t.Errorf("ListTraces limit 2 (-want +got):\n%s", d)
	}
	_, err = s.GetTrace(ctx, scopeA, "missing")
	wantErr(t, "GetTrace unknown", err, imprint.ErrNotFound)
}
