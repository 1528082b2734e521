package record

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

// orderStore notes the order of session markings and message appends, and
// fails the marking of sessions in failMark.
type orderStore struct {
	imprint.Store
	mu       sync.Mutex
	calls    []string
	failMark map[string]bool
}

func (s *orderStore) note(c string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

func (s *orderStore) MarkBetweenPeople(ctx context.Context, scope imprint.Scope, sessionID string) error {
	s.note("mark " + sessionID)
	if s.failMark[sessionID] {
		return imprint.ErrUnavailable
	}
	return s.Store.MarkBetweenPeople(ctx, scope, sessionID)
}

func (s *orderStore) AppendMessages(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) (imprint.AppendResult, error) {
	s.note("append " + sessionID)
	return s.Store.AppendMessages(ctx, scope, sessionID, msgs)
}

// A conversation between people recorded with its marker is marked before
// its messages are stored (both RecordSession and RecordMany); a session
// recorded without it stays unmarked, and a marked one stays marked when
// later messages come without it. The speakers reach the store and the
// conversations shard.
func TestRecordBetweenPeople(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	st := &orderStore{Store: f.db}
	f = withStore(t, f, plainStore{st}, Config{})
	ctx := context.Background()
	caroline := imprint.Message{ID: "c1", Role: imprint.RoleUser, Content: "I went to a support group yesterday.", Speaker: "Caroline"}
	melanie := imprint.Message{ID: "c2", Role: imprint.RoleAssistant, Content: "I signed up for a pottery class.", Speaker: "Melanie"}
	if _, err := f.rec.RecordSession(ctx, scope, Session{SessionID: "conv-26", Messages: []imprint.Message{caroline, melanie}, BetweenPeople: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rec.RecordMany(ctx, scope, []Session{
		{SessionID: "conv-30", Messages: []imprint.Message{user("j1", "I lost my job as a banker.")}, BetweenPeople: true},
		{SessionID: "agent", Messages: []imprint.Message{user("a1", "From now on answer in English.")}},
	}); err != nil {
		t.Fatal(err)
	}
	// Later messages of conv-26 without the marker.
	if _, err := f.rec.Record(ctx, scope, "conv-26", []imprint.Message{user("c3", "I'm keen on counseling.")}); err != nil {
		t.Fatal(err)
	}
	want := []string{"mark conv-26", "append conv-26", "mark conv-30", "append conv-30", "append agent", "append conv-26"}
	if d := cmp.Diff(want, st.calls); d != "" {
		t.Errorf("store calls (-want +got):\n%s", d)
	}
	for sid, people := range map[string]bool{"conv-26": true, "conv-30": true, "agent": false} {
		s, err := f.db.GetSession(ctx, scope, sid)
		if err != nil {
			t.Fatal(err)
		}
		if s.BetweenPeople != people {
			t.Errorf("session %s: between_people %v, want %v", sid, s.BetweenPeople, people)
		}
	}
	got, err := f.db.GetMessage(ctx, scope, "conv-26", "c2")
	if err != nil {
		t.Fatal(err)
	}
	if got.Speaker != "Melanie" {
		t.Errorf("stored speaker %q, want Melanie", got.Speaker)
	}
	speakers := map[string]any{}
	for _, l := range f.shardLines(t) {
		speakers[l["id"].(string)] = l["speaker"]
	}
	if d := cmp.Diff(map[string]any{"c1": "Caroline", "c2": "Melanie", "j1": nil, "a1": nil, "c3": nil}, speakers); d != "" {
		t.Errorf("shard speakers (-want +got):\n%s", d)
	}
}

// A session already marked between people is not marked again: later
// calls of the conversation run no marking write before their append.
func TestRecordBetweenPeopleMarksOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	st := &orderStore{Store: f.db}
	f = withStore(t, f, st, Config{})
	ctx := context.Background()
	for _, id := range []string{"c1", "c2", "c3"} {
		if _, err := f.rec.RecordSession(ctx, scope, Session{SessionID: "conv-26", Messages: []imprint.Message{user(id, "I went hiking.")}, BetweenPeople: true}); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff([]string{"mark conv-26", "append conv-26", "append conv-26", "append conv-26"}, st.calls); d != "" {
		t.Errorf("store calls (-want +got):\n%s", d)
	}
	s, err := f.db.GetSession(ctx, scope, "conv-26")
	if err != nil {
		t.Fatal(err)
	}
	if !s.BetweenPeople || s.RoundsSinceExtraction != 3 {
		t.Errorf("session %+v: want marked between people with 3 rounds", s)
	}
}

// When the marker cannot be written, the call fails and none of its
// messages are stored: they would otherwise be extracted as a
// conversation with an assistant.
func TestRecordBetweenPeopleMarkFails(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	st := &orderStore{Store: f.db, failMark: map[string]bool{"conv-26": true}}
	f = withStore(t, f, st, Config{})
	ctx := context.Background()
	res, err := f.rec.RecordMany(ctx, scope, []Session{
		{SessionID: "conv-26", Messages: []imprint.Message{user("c1", "I went hiking.")}, BetweenPeople: true},
		{SessionID: "agent", Messages: []imprint.Message{user("a1", "I live in Oslo.")}},
	})
	if !errors.Is(err, imprint.ErrUnavailable) {
		t.Fatalf("RecordMany error %v, want ErrUnavailable", err)
	}
	if res[0].RecordedCount != 0 || res[1].RecordedCount != 1 {
		t.Errorf("recorded %d and %d messages, want 0 (marking failed) and 1", res[0].RecordedCount, res[1].RecordedCount)
	}
	if _, err := f.db.GetMessage(ctx, scope, "conv-26", "c1"); !errors.Is(err, imprint.ErrNotFound) {
		t.Errorf("message of the unmarked session: %v, want not found", err)
	}
}
