package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	imprint "github.com/imprint-dev/imprint"
)

// The cases of the copy of a store (imprint.Dumper on the source,
// imprint.Loader on the target; imprint migrate).

// dumpAll reads every record of d in pages of two, so paging is
// exercised.
func dumpAll(t *testing.T, d imprint.Dumper) ([]imprint.SessionState, []imprint.Message, []imprint.Memory, []imprint.Capture) {
	t.Helper()
	ctx := ctxFor(t)
	var ss []imprint.SessionState
	var ms []imprint.Message
	var mems []imprint.Memory
	var cs []imprint.Capture
	for after := ""; ; {
		p, next, err := d.DumpSessions(ctx, after, 2)
		must(t, err)
		ss, after = append(ss, p...), next
		if len(p) < 2 {
			break
		}
	}
	for after := ""; ; {
		p, next, err := d.DumpMessages(ctx, after, 2)
		must(t, err)
		ms, after = append(ms, p...), next
		if len(p) < 2 {
			break
		}
	}
	for after := ""; ; {
		p, next, err := d.DumpMemories(ctx, after, 2)
		must(t, err)
		mems, after = append(mems, p...), next
		if len(p) < 2 {
			break
		}
	}
	for after := ""; ; {
		p, next, err := d.DumpCaptures(ctx, after, 1)
		must(t, err)
		cs, after = append(cs, p...), next
		if len(p) < 1 {
			break
		}
	}
	return ss, ms, mems, cs
}

func testDump(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	d, _ := imprint.AsDumper(s)
	empty, err := d.DumpCounts(ctx)
	must(t, err)
	if empty != (imprint.DumpCounts{}) {
		t.Errorf("DumpCounts of an empty store = %+v", empty)
	}
	m1 := msg("m1", imprint.RoleUser, "book a flight", 0)
	m1.Vec, m1.Embedder = []float32{1, 0, 0}, "e"
	appendMsgs(t, s, scopeA, "s1", m1, msg("m2", imprint.RoleAssistant, "done", 1), msg("m3", imprint.RoleUser, "thanks", 2))
	appendMsgs(t, s, scopeB, "s2", msg("m1", imprint.RoleUser, "other scope", 3))
	m2, err := s.GetMessage(ctx, scopeA, "s1", "m2")
	must(t, err)
	must(t, s.AdvanceCursor(ctx, scopeA, "s1", m2.Seq, "travel", at(5).Time))
	must(t, s.MarkBetweenPeople(ctx, scopeC, "no-messages"))
	old := imprint.Memory{ID: "mem-1", Content: "User flies to Paris", Type: imprint.MemoryEpisodic, Scope: scopeA,
		SessionID: "s1", Vec: []float32{0, 1, 0}, Embedder: "e", ContentHash: "h1", CreatedAt: at(1), UpdatedAt: at(1)}
	must(t, s.PutMemory(ctx, old, nil))
	must(t, s.PutMemory(ctx, imprint.Memory{ID: "mem-2", Content: "User flies to Rome", Type: imprint.MemoryEpisodic,
		Scope: scopeA, SessionID: "s1", Version: 2, CreatedAt: at(2), UpdatedAt: at(2)}, []string{"mem-1"}))
	must(t, s.PutMemory(ctx, imprint.Memory{ID: "mem-3", Content: "User likes tea", Type: imprint.MemoryPersona, Scope: scopeA,
		CreatedAt: at(3), UpdatedAt: at(3)}, nil))
	_, err = s.RetireMemory(ctx, scopeA, "mem-3", at(4).Time)
	must(t, err)
	trs := steps(2, "ep1")
	trs[0].VecSummary, trs[0].VecAction, trs[0].Embedder = []float32{0, 0, 1}, []float32{1, 1, 0}, "e"
	must(t, s.SaveCapture(ctx, episode("ep1", scopeA), trs))
	calls := []imprint.LLMCall{
		{Op: "extract.v3", Scope: scopeA, Provider: "openai", Model: "m", PromptTokens: 120, CompletionTokens: 30,
			Latency: 250 * time.Millisecond, Outcome: "ok", Attempt: 1, At: at(1)},
		{Op: "capture.alpha.v1", Provider: "openai", Model: "m", PromptTokens: 10, TokensEstimated: true,
			Latency: 2 * time.Second, Outcome: "llm_timeout", Attempt: 2, At: at(2)},
	}
	for _, c := range calls {
		must(t, s.RecordLLMCall(ctx, c))
	}
	svc, service := s.(imprint.ServiceStore)
	wantCounts := imprint.DumpCounts{Sessions: 3, Messages: 4, Memories: 3, Episodes: 1, Traces: 2, LLMCalls: 2}
	var keyHash []byte
	if service {
		_, err := svc.AppendTurns(ctx, scopeA, "live", []imprint.Turn{{ID: "t1", Role: imprint.RoleUser, Content: "hello"}}, "ep-live")
		must(t, err)
		_, err = svc.AppendTurns(ctx, scopeA, "live", []imprint.Turn{{ID: "t2", Role: imprint.RoleAssistant, Content: "hi"}}, "unused")
		must(t, err)
		k, tok := imprint.NewAPIKey(imprint.KeyScope{Tenant: "acme"}, "ci", true, at(0))
		keyHash = imprint.HashAPIKeyToken(tok)
		must(t, svc.CreateAPIKey(ctx, k, keyHash))
		_, err = svc.RevokeAPIKey(ctx, k.ID, at(9))
		must(t, err)
		// An open episode's session is made with it.
		wantCounts.Sessions, wantCounts.Episodes, wantCounts.APIKeys = 4, 2, 1
	}

	counts, err := d.DumpCounts(ctx)
	must(t, err)
	if counts != wantCounts {
		t.Errorf("DumpCounts = %+v, want %+v", counts, wantCounts)
	}
	ss, ms, mems, cs := dumpAll(t, d)
	// Messages come in the order they were recorded, with their vectors.
	var got []string
	for _, m := range ms {
		got = append(got, m.Scope.Agent+"/"+m.ID)
	}
	if d := diff([]string{"claude/m1", "claude/m2", "claude/m3", "codex/m1"}, got); d != "" {
		t.Errorf("dumped messages (-want +got):\n%s", d)
	}
	if len(ms) > 0 && (ms[0].Embedder != "e" || diff(m1.Vec, ms[0].Vec) != "") {
		t.Errorf("dumped m1 vector = %v (%q), want %v", ms[0].Vec, ms[0].Embedder, m1.Vec)
	}
	// Sessions carry their cursor as the message it stands on.
	cursors := map[string]string{}
	for _, st := range ss {
		cursors[st.ID] = st.CursorMessageID
		want, err := s.GetSession(ctx, st.Scope, st.ID)
		must(t, err)
		if d := diff(want, st.Session); d != "" {
			t.Errorf("dumped session %s (-GetSession +dump):\n%s", st.ID, d)
		}
	}
	wantCursors := map[string]string{"s1": "m2", "s2": "", "no-messages": ""}
	if service {
		wantCursors["live"] = ""
	}
	if d := diff(wantCursors, cursors); d != "" {
		t.Errorf("dumped cursors (-want +got):\n%s", d)
	}
	// Every memory version, as GetMemory reads it (vector included).
	if len(mems) != 3 {
		t.Fatalf("dumped %d memories, want 3", len(mems))
	}
	for _, m := range mems {
		want, err := s.GetMemory(ctx, m.Scope, m.ID)
		must(t, err)
		if d := diff(want, m); d != "" {
			t.Errorf("dumped memory %s (-GetMemory +dump):\n%s", m.ID, d)
		}
	}
	if mems[0].ID != "mem-1" || mems[0].SupersededBy == nil || *mems[0].SupersededBy != "mem-2" ||
		diff(old.Vec, mems[0].Vec) != "" || mems[0].ContentHash != "h1" || mems[2].ForgottenAt == nil {
		t.Errorf("dumped memories lost a version chain, a vector, a hash or a forgotten mark: %+v", mems)
	}
	// Episodes with every turn and their traces with vectors.
	byID := map[string]imprint.Capture{}
	for _, c := range cs {
		byID[c.Episode.ID] = c
	}
	c := byID["ep1"]
	if d := diff(trs[0].VecSummary, traceVec(c, 0, true)); d != "" || diff(trs[0].VecAction, traceVec(c, 0, false)) != "" {
		t.Errorf("dumped trace vectors of ep1: %+v", c.Traces)
	}
	if d := diff([]string{"ep1-step-0", "ep1-step-1"}, traceIDs(c.Traces)); d != "" {
		t.Errorf("dumped traces of ep1 (-want +got):\n%s", d)
	}
	if want, err := s.GetEpisode(ctx, scopeA, "ep1"); err != nil || diff(want, c.Episode) != "" {
		t.Errorf("dumped ep1 differs from GetEpisode (%v):\n%s", err, diff(want, c.Episode))
	}
	if service {
		live := byID["ep-live"].Episode
		if live.Status != imprint.EpisodeOpen || len(live.Turns) != 2 {
			t.Errorf("dumped open episode: status %q, %d turns, want open with 2", live.Status, len(live.Turns))
		}
		keys, err := d.DumpAPIKeys(ctx)
		must(t, err)
		if len(keys) != 1 || !bytes.Equal(keys[0].TokenHash, keyHash) || keys[0].Key.RevokedAt == nil || !keys[0].Key.ReadOnly {
			t.Errorf("dumped API keys = %+v", keys)
		}
	}
	// The call log, oldest first, as recorded.
	var log []imprint.LLMCall
	for after := ""; ; {
		p, next, err := d.DumpLLMCalls(ctx, after, 1)
		must(t, err)
		log, after = append(log, p...), next
		if len(p) < 1 {
			break
		}
	}
	if d := diff(calls, log); d != "" {
		t.Errorf("dumped call log (-recorded +dumped):\n%s", d)
	}
	// A position the store never gave is refused.
	_, _, err = d.DumpMessages(ctx, "not a position", 2)
	wantErr(t, "DumpMessages after a foreign position", err, imprint.ErrInvalid)
}

func traceVec(c imprint.Capture, i int, summary bool) []float32 {
	if i >= len(c.Traces) {
		return nil
	}
	if summary {
		return c.Traces[i].VecSummary
	}
	return c.Traces[i].VecAction
}

func testLoad(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	l, _ := imprint.AsLoader(s)
	svc, ok := s.(imprint.ServiceStore)
	if !ok {
		t.Skip("store is no imprint.ServiceStore: a Loader loads jobs")
	}
	// The mark: none, then as set, then replaced.
	m, err := l.LoadMark(ctx)
	must(t, err)
	if m.Source != "" || m.Done {
		t.Errorf("LoadMark of a fresh store = %+v", m)
	}
	mark := imprint.LoadMark{Source: "sqlite:/a.db", Positions: map[string]string{"messages": "7"}, StartedAt: at(0), UpdatedAt: at(1)}
	must(t, l.SetLoadMark(ctx, mark))
	mark.Done, mark.Positions["sessions"] = true, "3"
	must(t, l.SetLoadMark(ctx, mark))
	m, err = l.LoadMark(ctx)
	must(t, err)
	if d := diff(mark, m); d != "" {
		t.Errorf("LoadMark (-set +read):\n%s", d)
	}

	// The call log: a page appended with the mark, in one transaction.
	call := imprint.LLMCall{Op: "extract.v3", Scope: scopeA, Provider: "openai", Model: "m", PromptTokens: 120,
		CompletionTokens: 30, Latency: 250 * time.Millisecond, Outcome: "ok", Attempt: 1, At: at(1)}
	mark.Positions["llm_calls"] = "1"
	must(t, l.LoadLLMCalls(ctx, []imprint.LLMCall{call}, mark))
	logged, err := s.LLMCallsOfScope(ctx, scopeA, at(0).Time)
	must(t, err)
	if len(logged) != 1 || logged[0].PromptTokens != 120 || logged[0].Latency != call.Latency || !logged[0].At.Equal(call.At.Time) {
		t.Errorf("loaded call log = %+v, want %+v", logged, call)
	}
	if m, err := l.LoadMark(ctx); err != nil || m.Positions["llm_calls"] != "1" {
		t.Errorf("mark after LoadLLMCalls = %+v, %v", m, err)
	}

	// Sessions: written as given, the cursor on a message id.
	appendMsgs(t, s, scopeA, "s1", msg("m1", imprint.RoleUser, "one", 0), msg("m2", imprint.RoleAssistant, "two", 1),
		msg("m3", imprint.RoleUser, "three", 2))
	s1 := imprint.Session{ID: "s1", Scope: scopeA, Workspace: "proj", LastSceneName: "scene", RoundsSinceExtraction: 1,
		ExtractionDue: true, BetweenPeople: true, LastExtractedAt: at(5), CreatedAt: at(-10), UpdatedAt: at(6)}
	s9 := imprint.Session{ID: "s9", Scope: scopeB, CreatedAt: at(-5), UpdatedAt: at(-5)}
	wantErr(t, "LoadSessions without an id", l.LoadSessions(ctx, []imprint.SessionState{{Session: imprint.Session{Scope: scopeA}}}), imprint.ErrInvalid)
	for range 2 { // loading again changes nothing
		must(t, l.LoadSessions(ctx, []imprint.SessionState{{Session: s1, CursorMessageID: "m2"}, {Session: s9}}))
	}
	for _, want := range []imprint.Session{s1, s9} {
		got, err := s.GetSession(ctx, want.Scope, want.ID)
		must(t, err)
		if d := diff(want, got, cmpopts.IgnoreFields(imprint.Session{}, "Cursor")); d != "" {
			t.Errorf("loaded session %s (-want +got):\n%s", want.ID, d)
		}
	}
	pending, err := s.PendingMessages(ctx, scopeA, "s1", 10)
	must(t, err)
	if d := diff([]string{"m3"}, msgIDs(pending)); d != "" {
		t.Errorf("pending after the loaded cursor (-want +got):\n%s", d)
	}
	if n, err := s.CountPending(ctx, scopeB, "s9"); err != nil || n != 0 {
		t.Errorf("CountPending of a session without messages = %d, %v", n, err)
	}
	// The loaded session is due with a pending message: the planner finds it.
	due, err := svc.SessionsToExtract(ctx, at(-100).Time, 10)
	must(t, err)
	if !contains(ids(due, func(s imprint.Session) string { return s.ID }), "s1") {
		t.Errorf("SessionsToExtract after a load = %v, want s1", due)
	}

	// Jobs: inserted as they stand, a running one available again; loading
	// them again inserts none.
	key := imprint.ExtractJobKey(scopeA, "s1")
	jobs := []imprint.Job{
		{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", State: imprint.JobRetryable, Attempts: 2, MaxAttempts: 5,
			LastError: "timeout", UniqueKey: key, RunAt: at(3), CreatedAt: at(1), UpdatedAt: at(2)},
		{Kind: imprint.JobCapture, Scope: scopeA, SessionID: "s1", EpisodeID: "ep1", State: imprint.JobRunning, Attempts: 1,
			MaxAttempts: 8, RunAt: at(1), CreatedAt: at(1), UpdatedAt: at(1)},
		{Kind: imprint.JobEmbed, Scope: scopeB, State: imprint.JobFailed, Attempts: 8, MaxAttempts: 8, LastError: "gave up",
			RunAt: at(1), CreatedAt: at(0), UpdatedAt: at(4)},
	}
	wantErr(t, "LoadJobs of a job without a kind", func() error {
		_, err := l.LoadJobs(ctx, []imprint.Job{{Scope: scopeA, State: imprint.JobAvailable}})
		return err
	}(), imprint.ErrInvalid)
	n, err := l.LoadJobs(ctx, jobs)
	must(t, err)
	if n != 3 {
		t.Errorf("LoadJobs inserted %d of 3", n)
	}
	again, err := l.LoadJobs(ctx, append(jobs, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1",
		State: imprint.JobAvailable, UniqueKey: key, RunAt: at(7), CreatedAt: at(7), UpdatedAt: at(7)}))
	must(t, err)
	if again != 0 {
		t.Errorf("LoadJobs again (and a job whose unique key is held) inserted %d", again)
	}
	for state, want := range map[imprint.JobState][]imprint.Job{
		imprint.JobRetryable: {jobs[0]},
		imprint.JobAvailable: {{Kind: imprint.JobCapture, Scope: scopeA, SessionID: "s1", EpisodeID: "ep1", State: imprint.JobAvailable,
			Attempts: 0, MaxAttempts: 8, RunAt: at(1), CreatedAt: at(1), UpdatedAt: at(1)}},
		imprint.JobFailed: {jobs[2]},
	} {
		got, err := svc.ListJobs(ctx, nil, state, 10)
		must(t, err)
		if d := diff(want, got, cmpopts.IgnoreFields(imprint.Job{}, "ID")); d != "" {
			t.Errorf("loaded %s jobs (-want +got):\n%s", state, d)
		}
	}
	// A loaded job runs: claimed as any other.
	claimed, err := svc.ClaimJobs(ctx, at(10).Time, 10)
	must(t, err)
	if len(claimed) != 2 {
		t.Errorf("ClaimJobs after a load claimed %d jobs, want the retryable and the available one", len(claimed))
	}
}
