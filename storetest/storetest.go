package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// Run runs the conformance suite against stores made by open, which must
// return a fresh, empty, migrated store (the suite closes it). Subtests run
// in parallel, each on its own store. It runs the cases of every required
// method; the cases of each optional capability (imprint's capability.go)
// run when the store says it supports it and are skipped with a line
// saying so otherwise. When the stores implement imprint.ServiceStore, the
// cases of RunService run as well, and those of a job engine host
// (RunJobEngineHost) for TTx, the type of the stores' write transactions
// (*sql.Tx for SQLite, pgx.Tx for PostgreSQL). A zero
// VectorQuery.MinScore does not filter; a query vector of another
// dimension matches nothing.
func Run[TTx any](t *testing.T, open func(t *testing.T) imprint.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s imprint.Store)
	}{
		{"Ping", testPing},
		{"EmptyScopeIsInvalid", testEmptyScope},
		{"OtherScopeSeesNothing", testOtherScope},
		{"AppendMessagesIdempotent", testAppendIdempotent},
		{"AppendMessagesValidation", testAppendValidation},
		{"GetMessage", testGetMessage},
		{"PendingAndCursor", testPendingCursor},
		{"MessagesBefore", testMessagesBefore},
		{"Sessions", testSessions},
		{"SessionBetweenPeople", testSessionBetweenPeople},
		{"SetMessageVectors", testSetMessageVectors},
		{"ConcurrentWrites", testConcurrentWrites},
		{"EpisodeRoundTrip", testEpisodeRoundTrip},
		{"EpisodeConflictAcrossScopes", testEpisodeConflict},
		{"SaveCaptureIdempotent", testSaveCaptureIdempotent},
		{"SaveCaptureRemovesVanishedSteps", testSaveCaptureVanished},
		{"SaveCaptureConflictWritesNothing", testSaveCaptureConflict},
		{"TraceRoundTrip", testTraceRoundTrip},
		{"ListTraces", testListTraces},
		{"MemoryRoundTrip", testMemoryRoundTrip},
		{"MemorySupersede", testMemorySupersede},
		{"MemorySupersedeConflict", testMemorySupersedeConflict},
		{"ListMemories", testListMemories},
		{"FindMemoryByHash", testFindMemoryByHash},
		{"SearchTextEnglish", testSearchTextEnglish},
		{"SearchTextCJK", testSearchTextCJK},
		{"SearchTextFilters", testSearchTextFilters},
		{"SearchTextTraces", testSearchTextTraces},
		{"SearchTextOrder", testSearchTextOrder},
		{"SearchTextRankOrder", testSearchTextRankOrder},
		{"SearchTextMessages", testSearchTextMessages},
		{"SearchTextMessageContext", testSearchTextMessageContext},
		{"SearchTextHostile", testSearchTextHostile},
		{"SearchVectorOrder", testSearchVectorOrder},
		{"SearchVectorFilters", testSearchVectorFilters},
		{"SearchVectorSupersededAndUpdates", testSearchVectorUpdates},
		{"SearchVectorTraces", testSearchVectorTraces},
		{"SearchVectorMessages", testSearchVectorMessages},
		{"LLMUsage", testLLMUsage},
		{"LLMCallsOfScope", testLLMCallsOfScope},
		{"HasLiveMemoryHash", testHasLiveMemoryHash},
		{"EmbedRetry", testEmbedRetry},
		{"Totals", testTotals},
		{"RetireMemory", testRetireMemory},
		{"ForgottenRoundTrip", testForgottenRoundTrip},
		{"PurgeMemories", testPurgeMemories},
		{"PurgeMessages", testPurgeMessages},
		{"ListNoLimit", testListNoLimit},
		{"WorkspaceMemories", testWorkspaceMemories},
		{"WorkspaceTraces", testWorkspaceTraces},
		{"WorkspaceMessages", testWorkspaceMessages},
		{"WorkspaceSearch", testWorkspaceSearch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
	runOptional(t, open)
	// Stores that also serve imprint serve pass the service cases too.
	probe := open(t)
	_, service := probe.(imprint.ServiceStore)
	_ = probe.Close()
	if service {
		openService := func(t *testing.T) imprint.ServiceStore { return open(t).(imprint.ServiceStore) }
		RunService(t, openService)
		RunJobEngineHost[TTx](t, openService)
	} else {
		t.Log("store is no imprint.ServiceStore: service cases not run")
	}
}

// Scopes used by the suite: B and C differ from A in one field each.
var (
	scopeA = imprint.Scope{Tenant: "acme", User: "alice", Agent: "claude"}
	scopeB = imprint.Scope{Tenant: "acme", User: "alice", Agent: "codex"}
	scopeC = imprint.Scope{Tenant: "other", User: "alice", Agent: "claude"}
)

// t0 is the base time of the suite's records.
var t0 = imprint.At(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))

func at(minutes int) imprint.Time { return imprint.At(t0.Add(time.Duration(minutes) * time.Minute)) }

func ctxFor(t *testing.T) context.Context { return t.Context() }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, what string, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Errorf("%s: error %v, want kind %v", what, err, kind)
	}
}

func msg(id string, role imprint.Role, content string, minute int) imprint.Message {
	return imprint.Message{ID: id, Role: role, Content: content, Timestamp: at(minute)}
}

func appendMsgs(t *testing.T, s imprint.Store, scope imprint.Scope, session string, msgs ...imprint.Message) imprint.AppendResult {
	t.Helper()
	res, err := s.AppendMessages(ctxFor(t), scope, session, msgs)
	must(t, err)
	return res
}

func ids[T any](xs []T, id func(T) string) []string {
	out := []string{}
	for _, x := range xs {
		out = append(out, id(x))
	}
	return out
}

func msgIDs(ms []imprint.Message) []string {
	return ids(ms, func(m imprint.Message) string { return m.ID })
}
func hitIDs(hs []imprint.Hit) []string { return ids(hs, func(h imprint.Hit) string { return h.ID }) }
func memIDs(ms []imprint.Memory) []string {
	return ids(ms, func(m imprint.Memory) string { return m.ID })
}
func traceIDs(ts []imprint.Trace) []string {
	return ids(ts, func(t imprint.Trace) string { return t.ID })
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func testPing(t *testing.T, s imprint.Store) {
	must(t, s.Ping(ctxFor(t)))
}

func testLLMUsage(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	calls := []imprint.LLMCall{
		{Op: "capture.alpha.v1", Provider: "openai", Model: "m", PromptTokens: 100, CompletionTokens: 10, Latency: 200 * time.Millisecond, Outcome: "ok", Attempt: 1, At: at(0)},
		{Op: "capture.alpha.v1", Provider: "openai", Model: "m", PromptTokens: 50, CompletionTokens: 5, Latency: 100 * time.Millisecond, Outcome: "llm_timeout", Attempt: 2, At: at(1)},
		{Op: "extract.l1.v1", Provider: "openai", Model: "m", PromptTokens: 1000, CompletionTokens: 300, TokensEstimated: true, Latency: time.Second, Outcome: "ok", Attempt: 1, At: at(2)},
		{Op: "extract.l1.v1", Provider: "openai", Model: "m", PromptTokens: 7, CompletionTokens: 7, Outcome: "ok", Attempt: 1, At: at(-60)},
	}
	for _, c := range calls {
		must(t, s.RecordLLMCall(ctx, c))
	}
	got, err := s.LLMUsageByOp(ctx, t0.Time)
	must(t, err)
	want := map[string]imprint.LLMUsage{
		"capture.alpha.v1": {Calls: 2, PromptTokens: 150, CompletionTokens: 15, Errors: 1, LatencyMS: 300},
		"extract.l1.v1":    {Calls: 1, PromptTokens: 1000, CompletionTokens: 300, LatencyMS: 1000},
	}
	if d := diff(want, got); d != "" {
		t.Errorf("usage since t0 (-want +got):\n%s", d)
	}
	all, err := s.LLMUsageByOp(ctx, time.Time{})
	must(t, err)
	if all["extract.l1.v1"].Calls != 2 {
		t.Errorf("usage since zero time: extract calls %d, want 2", all["extract.l1.v1"].Calls)
	}
	none, err := s.LLMUsageByOp(ctx, at(10).Time)
	must(t, err)
	if len(none) != 0 {
		t.Errorf("usage after the last call = %v, want empty", none)
	}
}

// testLLMCallsOfScope checks the scoped call log an LLM budget counts:
// only the scope's calls at or after the time, oldest first.
func testLLMCallsOfScope(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	for _, c := range []imprint.LLMCall{
		{Op: "extract.l1.v1", Scope: scopeA, PromptTokens: 100, CompletionTokens: 10, Outcome: "ok", Attempt: 1, At: at(2)},
		{Op: "capture.alpha.v1", Scope: scopeA, PromptTokens: 50, CompletionTokens: 5, Latency: 1500 * time.Millisecond, Outcome: "ok", Attempt: 1, At: at(1)},
		{Op: "extract.l1.v1", Scope: scopeA, PromptTokens: 7, Outcome: "ok", Attempt: 1, At: at(-60)},
		{Op: "extract.l1.v1", Scope: scopeB, PromptTokens: 9, Outcome: "ok", Attempt: 1, At: at(1)},
		{Op: "extract.l1.v1", PromptTokens: 11, Outcome: "ok", Attempt: 1, At: at(1)},
	} {
		must(t, s.RecordLLMCall(ctx, c))
	}
	got, err := s.LLMCallsOfScope(ctx, scopeA, t0.Time)
	must(t, err)
	type call struct {
		Op        string
		Tokens    int
		LatencyMS int64
		At        imprint.Time
	}
	var calls []call
	for _, c := range got {
		if c.Scope != scopeA {
			t.Errorf("call of scope %s returned for %s", c.Scope, scopeA)
		}
		calls = append(calls, call{c.Op, c.PromptTokens, c.Latency.Milliseconds(), c.At})
	}
	if d := diff([]call{{"capture.alpha.v1", 50, 1500, at(1)}, {"extract.l1.v1", 100, 0, at(2)}}, calls); d != "" {
		t.Errorf("LLMCallsOfScope(A, t0) (-want +got):\n%s", d)
	}
	none, err := s.LLMCallsOfScope(ctx, scopeC, time.Time{})
	must(t, err)
	if len(none) != 0 {
		t.Errorf("calls of a scope that made none: %+v", none)
	}
	_, err = s.LLMCallsOfScope(ctx, imprint.Scope{}, time.Time{})
	wantErr(t, "LLMCallsOfScope without a scope", err, imprint.ErrInvalid)
}
