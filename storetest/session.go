package storetest

import (
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// testSessionBetweenPeople checks the durable between-people marker: it
// creates the session when needed, survives appends (both append paths)
// and a second marking, touches no other session or scope, and is what
// the session reads and lists show.
func testSessionBetweenPeople(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	wantErr(t, "MarkBetweenPeople without a session id", s.MarkBetweenPeople(ctx, scopeA, " "), imprint.ErrInvalid)
	wantErr(t, "MarkBetweenPeople without a scope", s.MarkBetweenPeople(ctx, imprint.Scope{}, "chat"), imprint.ErrInvalid)

	// Marked before its first message, as the recorder does.
	must(t, s.MarkBetweenPeople(ctx, scopeA, "chat"))
	got, err := s.GetSession(ctx, scopeA, "chat")
	must(t, err)
	if !got.BetweenPeople || got.Cursor != 0 || got.RoundsSinceExtraction != 0 {
		t.Errorf("new marked session: %+v, want between_people, cursor 0, no rounds", got)
	}
	res := appendMsgs(t, s, scopeA, "chat", msg("c1", imprint.RoleUser, "I went hiking yesterday.", 0),
		msg("c2", imprint.RoleAssistant, "I adopted a dog last week.", 1))
	if !res.Session.BetweenPeople || res.Session.RoundsSinceExtraction != 1 {
		t.Errorf("append to a marked session returned %+v, want between_people and 1 round", res.Session)
	}
	if ba, ok := imprint.AsBatchAppender(s); ok {
		ars, err := ba.AppendMessageBatches(ctx, []imprint.MessageBatch{{Scope: scopeA, SessionID: "chat",
			Messages: []imprint.Message{msg("c3", imprint.RoleUser, "We moved in May.", 2)}}})
		must(t, err)
		if len(ars) != 1 || !ars[0].Session.BetweenPeople {
			t.Errorf("batch append to a marked session returned %+v, want between_people", ars)
		}
	} else {
		t.Log("store does not support BatchAppend: batch append not checked")
	}
	// Marking again keeps the session's bookkeeping.
	must(t, s.MarkBetweenPeople(ctx, scopeA, "chat"))
	again, err := s.GetSession(ctx, scopeA, "chat")
	must(t, err)
	if !again.BetweenPeople || again.RoundsSinceExtraction != 2 || again.CreatedAt != got.CreatedAt {
		t.Errorf("after marking again: %+v, want between_people, 2 rounds, created at %s", again, got.CreatedAt)
	}

	appendMsgs(t, s, scopeA, "agent", msg("a1", imprint.RoleUser, "From now on answer in English.", 0))
	list, err := s.ListSessions(ctx, scopeA)
	must(t, err)
	marked := map[string]bool{}
	for _, sess := range list {
		marked[sess.ID] = sess.BetweenPeople
	}
	if d := diff(map[string]bool{"chat": true, "agent": false}, marked); d != "" {
		t.Errorf("ListSessions between_people (-want +got):\n%s", d)
	}
	_, err = s.GetSession(ctx, scopeB, "chat")
	wantErr(t, "GetSession of the marked id in another scope", err, imprint.ErrNotFound)
	appendMsgs(t, s, scopeB, "chat", msg("b1", imprint.RoleUser, "hello there", 0))
	other, err := s.GetSession(ctx, scopeB, "chat")
	must(t, err)
	if other.BetweenPeople {
		t.Error("marking a session marked the same id in another scope")
	}
}
