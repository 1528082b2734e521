package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

func testEmptyScope(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	empty := imprint.Scope{}
	partial := imprint.Scope{Tenant: "acme", User: "alice"}
	for _, sc := range []imprint.Scope{empty, partial} {
		calls := map[string]error{}
		_, calls["AppendMessages"] = s.AppendMessages(ctx, sc, "s", []imprint.Message{msg("m1", imprint.RoleUser, "hello", 0)})
		_, calls["GetMessage"] = s.GetMessage(ctx, sc, "s", "m1")
		_, calls["PendingMessages"] = s.PendingMessages(ctx, sc, "s", 10)
		_, calls["CountPending"] = s.CountPending(ctx, sc, "s")
		_, calls["MessagesBefore"] = s.MessagesBefore(ctx, sc, "s", 10, 10)
		calls["SetMessageVectors"] = s.SetMessageVectors(ctx, sc, "s", map[string][]float32{"m1": {1, 0}}, "e/2")
		_, calls["GetSession"] = s.GetSession(ctx, sc, "s")
		_, calls["ListSessions"] = s.ListSessions(ctx, sc)
		calls["AdvanceCursor"] = s.AdvanceCursor(ctx, sc, "s", 1, "", time.Now())
		calls["MarkExtractionDue"] = s.MarkExtractionDue(ctx, sc, "s", true)
		calls["SaveEpisode"] = s.SaveEpisode(ctx, imprint.Episode{ID: "e", SessionID: "s", Scope: sc})
		_, calls["GetEpisode"] = s.GetEpisode(ctx, sc, "e")
		calls["SaveCapture"] = s.SaveCapture(ctx, imprint.Episode{ID: "e", SessionID: "s", Scope: sc}, nil)
		_, calls["GetTrace"] = s.GetTrace(ctx, sc, "t")
		_, calls["ListTraces"] = s.ListTraces(ctx, sc, imprint.TraceFilter{})
		calls["PutMemory"] = s.PutMemory(ctx, imprint.Memory{ID: "m", Content: "x", Type: imprint.MemoryPersona, Scope: sc}, nil)
		_, calls["GetMemory"] = s.GetMemory(ctx, sc, "m")
		_, calls["ListMemories"] = s.ListMemories(ctx, sc, imprint.MemoryFilter{})
		_, calls["FindMemoryByHash"] = s.FindMemoryByHash(ctx, sc, "h")
		_, calls["MemoryHistory"] = s.MemoryHistory(ctx, sc, "m")
		_, calls["CountMemories"] = s.CountMemories(ctx, sc)
		_, calls["SearchText"] = s.SearchText(ctx, imprint.TextQuery{Scope: sc, Kind: imprint.KindMemory, Text: "hello"})
		_, calls["SearchVector"] = s.SearchVector(ctx, imprint.VectorQuery{Scope: sc, Kind: imprint.KindMemory, Vector: []float32{1, 0}, Embedder: "e/2"})
		for name, err := range calls {
			wantErr(t, fmt.Sprintf("%s with scope %+v", name, sc), err, imprint.ErrInvalid)
		}
	}
}

// testOtherScope writes one of everything in scope A and checks that scopes
// B and C (one field different each) see none of it.
func testOtherScope(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	appendMsgs(t, s, scopeA, "s1", msg("m1", imprint.RoleUser, "I live in Lisbon", 0))
	ep := imprint.Episode{ID: "ep-scope", SessionID: "s1", Scope: scopeA, Status: imprint.EpisodeFinalized}
	must(t, s.SaveCapture(ctx, ep, []imprint.Trace{{ID: "tr-scope", StepKey: "0", UserText: "book Lisbon flight"}}))
	must(t, s.PutMemory(ctx, imprint.Memory{ID: "mem-scope", Content: "User lives in Lisbon", Type: imprint.MemoryPersona,
		Scope: scopeA, SessionID: "s1", ContentHash: "h1", Vec: []float32{1, 0}, Embedder: "e/2"}, nil))

	for _, sc := range []imprint.Scope{scopeB, scopeC} {
		_, err := s.GetMessage(ctx, sc, "s1", "m1")
		wantErr(t, "GetMessage other scope", err, imprint.ErrNotFound)
		_, err = s.GetSession(ctx, sc, "s1")
		wantErr(t, "GetSession other scope", err, imprint.ErrNotFound)
		_, err = s.GetEpisode(ctx, sc, "ep-scope")
		wantErr(t, "GetEpisode other scope", err, imprint.ErrNotFound)
		_, err = s.GetTrace(ctx, sc, "tr-scope")
		wantErr(t, "GetTrace other scope", err, imprint.ErrNotFound)
		_, err = s.GetMemory(ctx, sc, "mem-scope")
		wantErr(t, "GetMemory other scope", err, imprint.ErrNotFound)
		_, err = s.MemoryHistory(ctx, sc, "mem-scope")
		wantErr(t, "MemoryHistory other scope", err, imprint.ErrNotFound)
		wantErr(t, "AdvanceCursor other scope", s.AdvanceCursor(ctx, sc, "s1", 100, "x", time.Now()), imprint.ErrNotFound)
		wantErr(t, "MarkExtractionDue other scope", s.MarkExtractionDue(ctx, sc, "s1", true), imprint.ErrNotFound)

		pend, err := s.PendingMessages(ctx, sc, "s1", 0)
		must(t, err)
		n, err := s.CountPending(ctx, sc, "s1")
		must(t, err)
		before, err := s.MessagesBefore(ctx, sc, "s1", 1<<40, 10)
		must(t, err)
		sessions, err := s.ListSessions(ctx, sc)
		must(t, err)
		traces, err := s.ListTraces(ctx, sc, imprint.TraceFilter{})
		must(t, err)
		mems, err := s.ListMemories(ctx, sc, imprint.MemoryFilter{AllVersions: true})
		must(t, err)
		byHash, err := s.FindMemoryByHash(ctx, sc, "h1")
		must(t, err)
		count, err := s.CountMemories(ctx, sc)
		must(t, err)
		if len(pend)+n+len(before)+len(sessions)+len(traces)+len(mems)+len(byHash)+count != 0 {
			t.Errorf("scope %v sees scope A's records: pending %d/%d, before %d, sessions %d, traces %d, memories %d, by hash %d, count %d",
				sc, len(pend), n, len(before), len(sessions), len(traces), len(mems), len(byHash), count)
		}
		for _, k := range []imprint.Kind{imprint.KindMemory, imprint.KindTrace, imprint.KindMessage} {
			hits, err := s.SearchText(ctx, imprint.TextQuery{Scope: sc, Kind: k, Text: "Lisbon"})
			must(t, err)
			if len(hits) != 0 {
				t.Errorf("SearchText(%s) in scope %v = %v, want none", k, sc, hitIDs(hits))
			}
		}
		hits, err := s.SearchVector(ctx, imprint.VectorQuery{Scope: sc, Kind: imprint.KindMemory, Vector: []float32{1, 0}, Embedder: "e/2"})
		must(t, err)
		if len(hits) != 0 {
			t.Errorf("SearchVector in scope %v = %v, want none", sc, hitIDs(hits))
		}
		// Writing another scope's message id in the same session name is a
		// different record, not a duplicate.
		res := appendMsgs(t, s, sc, "s1", msg("m1", imprint.RoleUser, "other scope", 0))
		if len(res.Inserted) != 1 {
			t.Errorf("same message id in scope %v: inserted %v, want [m1]", sc, res.Inserted)
		}
	}
	m, err := s.GetMessage(ctx, scopeA, "s1", "m1")
	must(t, err)
	if m.Content != "I live in Lisbon" {
		t.Errorf("scope A's message changed to %q", m.Content)
	}
}

func testAppendIdempotent(t *testing.T, s imprint.Store) {
	res := appendMsgs(t, s, scopeA, "s1",
		msg("u1", imprint.RoleUser, "hello", 0),
		msg("a1", imprint.RoleAssistant, "hi there", 1),
		msg("u2", imprint.RoleUser, "book a flight", 2),
		msg("u2", imprint.RoleUser, "book a flight (repeated in the batch)", 2))
	if d := diff([]string{"u1", "a1", "u2"}, res.Inserted); d != "" {
		t.Errorf("first append inserted (-want +got):\n%s", d)
	}
	if d := diff([]string{"u2"}, res.Duplicates); d != "" {
		t.Errorf("first append duplicates (-want +got):\n%s", d)
	}
	if res.Session.ID != "s1" || res.Session.RoundsSinceExtraction != 2 {
		t.Errorf("session after first append = %+v, want s1 with 2 rounds", res.Session)
	}
	res = appendMsgs(t, s, scopeA, "s1",
		msg("u2", imprint.RoleUser, "book a flight", 2),
		msg("u3", imprint.RoleUser, "to Paris", 3))
	if d := diff([]string{"u3"}, res.Inserted); d != "" {
		t.Errorf("second append inserted (-want +got):\n%s", d)
	}
	if d := diff([]string{"u2"}, res.Duplicates); d != "" {
		t.Errorf("second append duplicates (-want +got):\n%s", d)
	}
	if res.Session.RoundsSinceExtraction != 3 {
		t.Errorf("rounds after second append = %d, want 3", res.Session.RoundsSinceExtraction)
	}
	// The same ids in another session are other messages.
	res = appendMsgs(t, s, scopeA, "s2", msg("u1", imprint.RoleUser, "hello again", 0))
	if len(res.Inserted) != 1 || res.Session.RoundsSinceExtraction != 1 {
		t.Errorf("same id in session s2: inserted %v rounds %d, want [u1] and 1", res.Inserted, res.Session.RoundsSinceExtraction)
	}
	all, err := s.PendingMessages(ctxFor(t), scopeA, "s1", 0)
	must(t, err)
	if d := diff([]string{"u1", "a1", "u2", "u3"}, msgIDs(all)); d != "" {
		t.Errorf("messages of s1 (-want +got):\n%s", d)
	}
	if all[2].Content != "book a flight" {
		t.Errorf("a duplicate overwrote the message: %q", all[2].Content)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Seq <= all[i-1].Seq {
			t.Errorf("Seq not increasing: %d then %d", all[i-1].Seq, all[i].Seq)
		}
	}
}

func testAppendValidation(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	_, err := s.AppendMessages(ctx, scopeA, "s1", []imprint.Message{{Role: imprint.RoleUser, Content: "no id"}})
	wantErr(t, "message without id", err, imprint.ErrInvalid)
	_, err = s.AppendMessages(ctx, scopeA, "", []imprint.Message{msg("m", imprint.RoleUser, "x", 0)})
	wantErr(t, "empty session id", err, imprint.ErrInvalid)
	n, err := s.CountPending(ctx, scopeA, "s1")
	must(t, err)
	if n != 0 {
		t.Errorf("a rejected append recorded %d messages", n)
	}
}

func testGetMessage(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	in := imprint.Message{ID: "m1", Role: imprint.RoleUser, Content: "我想订一张去北京的机票", Timestamp: at(5),
		RecordedAt: at(6), Speaker: "Caroline"}
	appendMsgs(t, s, scopeA, "s1", in)
	got, err := s.GetMessage(ctx, scopeA, "s1", "m1")
	must(t, err)
	want := in
	want.SessionID, want.Scope, want.Seq = "s1", scopeA, got.Seq
	if d := diff(want, got); d != "" {
		t.Errorf("GetMessage (-want +got):\n%s", d)
	}
	_, err = s.GetMessage(ctx, scopeA, "s2", "m1")
	wantErr(t, "GetMessage in another session", err, imprint.ErrNotFound)
	_, err = s.GetMessage(ctx, scopeA, "s1", "nope")
	wantErr(t, "GetMessage of an unknown id", err, imprint.ErrNotFound)

	// A message recorded without RecordedAt gets the store's time.
	appendMsgs(t, s, scopeA, "s1", msg("m2", imprint.RoleAssistant, "ok", 7))
	m2, err := s.GetMessage(ctx, scopeA, "s1", "m2")
	must(t, err)
	if m2.RecordedAt.IsZero() {
		t.Error("RecordedAt not set by the store")
	}
}

func testPendingCursor(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	var in []imprint.Message
	for i := range 5 {
		in = append(in, msg(fmt.Sprintf("m%d", i), imprint.RoleUser, fmt.Sprintf("message %d", i), i))
	}
	appendMsgs(t, s, scopeA, "s1", in...)
	all, err := s.PendingMessages(ctx, scopeA, "s1", 0)
	must(t, err)
	if d := diff([]string{"m0", "m1", "m2", "m3", "m4"}, msgIDs(all)); d != "" {
		t.Fatalf("pending before extraction (-want +got):\n%s", d)
	}
	first, err := s.PendingMessages(ctx, scopeA, "s1", 2)
	must(t, err)
	if d := diff([]string{"m0", "m1"}, msgIDs(first)); d != "" {
		t.Errorf("pending limit 2 (-want +got):\n%s", d)
	}
	must(t, s.MarkExtractionDue(ctx, scopeA, "s1", true))
	when := at(30)
	must(t, s.AdvanceCursor(ctx, scopeA, "s1", all[2].Seq, "flight booking", when.Time))
	rest, err := s.PendingMessages(ctx, scopeA, "s1", 0)
	must(t, err)
	if d := diff([]string{"m3", "m4"}, msgIDs(rest)); d != "" {
		t.Errorf("pending after the cursor moved (-want +got):\n%s", d)
	}
	n, err := s.CountPending(ctx, scopeA, "s1")
	must(t, err)
	if n != 2 {
		t.Errorf("CountPending = %d, want 2", n)
	}
	sess, err := s.GetSession(ctx, scopeA, "s1")
	must(t, err)
	if sess.Cursor != all[2].Seq || sess.LastSceneName != "flight booking" || sess.RoundsSinceExtraction != 0 ||
		sess.ExtractionDue || !sess.LastExtractedAt.Equal(when.Time) {
		t.Errorf("session after AdvanceCursor = %+v", sess)
	}
	// The cursor never moves backwards.
	must(t, s.AdvanceCursor(ctx, scopeA, "s1", all[0].Seq, "older", when.Time))
	n, err = s.CountPending(ctx, scopeA, "s1")
	must(t, err)
	if n != 2 {
		t.Errorf("CountPending after a backwards AdvanceCursor = %d, want 2", n)
	}
	// New user messages count rounds again from zero.
	res := appendMsgs(t, s, scopeA, "s1", msg("m5", imprint.RoleUser, "more", 9), msg("m6", imprint.RoleAssistant, "sure", 10))
	if res.Session.RoundsSinceExtraction != 1 {
		t.Errorf("rounds after extraction and one more user message = %d, want 1", res.Session.RoundsSinceExtraction)
	}
	n, err = s.CountPending(ctx, scopeA, "s1")
	must(t, err)
	if n != 4 {
		t.Errorf("CountPending = %d, want 4", n)
	}
	n, err = s.CountPending(ctx, scopeA, "unknown-session")
	must(t, err)
	if n != 0 {
		t.Errorf("CountPending of an unknown session = %d, want 0", n)
	}
}

func testMessagesBefore(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	var in []imprint.Message
	for i := range 6 {
		in = append(in, msg(fmt.Sprintf("m%d", i), imprint.RoleUser, fmt.Sprintf("message %d", i), i))
	}
	appendMsgs(t, s, scopeA, "s1", in...)
	appendMsgs(t, s, scopeA, "s2", msg("other", imprint.RoleUser, "other session", 0))
	all, err := s.PendingMessages(ctx, scopeA, "s1", 0)
	must(t, err)
	got, err := s.MessagesBefore(ctx, scopeA, "s1", all[4].Seq, 2)
	must(t, err)
	if d := diff([]string{"m2", "m3"}, msgIDs(got)); d != "" {
		t.Errorf("MessagesBefore(m4, 2) (-want +got):\n%s", d)
	}
	got, err = s.MessagesBefore(ctx, scopeA, "s1", all[1].Seq, 5)
	must(t, err)
	if d := diff([]string{"m0"}, msgIDs(got)); d != "" {
		t.Errorf("MessagesBefore(m1, 5) (-want +got):\n%s", d)
	}
}

func testSessions(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	_, err := s.GetSession(ctx, scopeA, "nope")
	wantErr(t, "GetSession unknown", err, imprint.ErrNotFound)
	wantErr(t, "AdvanceCursor unknown", s.AdvanceCursor(ctx, scopeA, "nope", 1, "", time.Now()), imprint.ErrNotFound)
	wantErr(t, "MarkExtractionDue unknown", s.MarkExtractionDue(ctx, scopeA, "nope", true), imprint.ErrNotFound)
	for _, id := range []string{"first", "second", "third"} {
		appendMsgs(t, s, scopeA, id, msg(id+"-m", imprint.RoleAssistant, "hi", 0))
		time.Sleep(2 * time.Millisecond) // distinct creation times
	}
	list, err := s.ListSessions(ctx, scopeA)
	must(t, err)
	if d := diff([]string{"first", "second", "third"}, ids(list, func(s imprint.Session) string { return s.ID })); d != "" {
		t.Errorf("ListSessions oldest first (-want +got):\n%s", d)
	}
	if list[0].RoundsSinceExtraction != 0 {
		t.Errorf("assistant messages counted as rounds: %d", list[0].RoundsSinceExtraction)
	}
	must(t, s.MarkExtractionDue(ctx, scopeA, "second", true))
	got, err := s.GetSession(ctx, scopeA, "second")
	must(t, err)
	if !got.ExtractionDue || got.Scope.Tenant != scopeA.Tenant {
		t.Errorf("after MarkExtractionDue(true): %+v", got)
	}
	must(t, s.MarkExtractionDue(ctx, scopeA, "second", false))
	got, err = s.GetSession(ctx, scopeA, "second")
	must(t, err)
	if got.ExtractionDue {
		t.Error("MarkExtractionDue(false) left the flag set")
	}
}

func testSetMessageVectors(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	withVec := msg("m0", imprint.RoleUser, "already embedded", 0)
	withVec.Vec, withVec.Embedder = []float32{0, 1}, "e/2"
	res := appendMsgs(t, s, scopeA, "s1", withVec, msg("m1", imprint.RoleUser, "needs a vector", 1))
	if len(res.Inserted) != 2 {
		t.Fatalf("inserted %v", res.Inserted)
	}
	must(t, s.SetMessageVectors(ctx, scopeA, "s1", map[string][]float32{"m0": {1, 0}, "m1": {1, 0}, "ghost": {1, 0}}, "e/2"))
	m0, err := s.GetMessage(ctx, scopeA, "s1", "m0")
	must(t, err)
	if d := diff([]float32{0, 1}, m0.Vec); d != "" {
		t.Errorf("SetMessageVectors overwrote an existing vector (-want +got):\n%s", d)
	}
	m1, err := s.GetMessage(ctx, scopeA, "s1", "m1")
	must(t, err)
	if d := diff([]float32{1, 0}, m1.Vec); d != "" || m1.Embedder != "e/2" {
		t.Errorf("vector of m1 = %v by %q, want [1 0] by e/2", m1.Vec, m1.Embedder)
	}
}

func testConcurrentWrites(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	const writers, each = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*2)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if _, err := s.AppendMessages(ctx, scopeA, fmt.Sprintf("s%d", w%3), []imprint.Message{msg(id, imprint.RoleUser, "concurrent "+id, i)}); err != nil {
					errs <- err
				}
				if err := s.PutMemory(ctx, imprint.Memory{ID: "mem-" + id, Content: "fact " + id, Type: imprint.MemoryEpisodic, Scope: scopeA}, nil); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent write failed: %v", err)
	}
	total := 0
	for i := range 3 {
		n, err := s.CountPending(ctx, scopeA, fmt.Sprintf("s%d", i))
		must(t, err)
		total += n
	}
	if total != writers*each {
		t.Errorf("recorded %d messages, want %d", total, writers*each)
	}
	n, err := s.CountMemories(ctx, scopeA)
	must(t, err)
	if n != writers*each {
		t.Errorf("stored %d memories, want %d", n, writers*each)
	}
}
