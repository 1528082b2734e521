package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/session"
	"github.com/imprint-dev/imprint/sqlite"
)

var scope = imprint.Scope{Tenant: "acme", User: "alice", Agent: "claude"}

// recorderAdapter is how cmd hands record.Recorder to the manager.
type recorderAdapter struct{ r *record.Recorder }

func (a recorderAdapter) RecordTurns(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) error {
	_, err := a.r.Record(ctx, scope, sessionID, msgs)
	return err
}

type fixture struct {
	db     *sqlite.DB
	m      *session.Manager
	mu     sync.Mutex
	events []string
	wakes  int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	f := &fixture{db: db}
	bus := imprint.PublisherFunc(func(_ context.Context, ev imprint.Event) {
		e := ev.Payload.(imprint.EpisodeEvent)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.events = append(f.events, ev.Type+" "+e.Episode.SessionID+" "+string(e.Episode.Status))
	})
	rec := record.NewRecorder(record.Deps{Store: db}, record.Config{EveryNRounds: 5})
	f.m = session.NewManager(session.ManagerDeps{Store: db, Events: bus, Recorder: recorderAdapter{rec},
		Ingest: &ingest.Due{Jobs: &countingJobs{db: db}},
		Wake:   func() { f.mu.Lock(); f.wakes++; f.mu.Unlock() }}, session.ManagerConfig{})
	return f
}

func (f *fixture) takeEvents() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.events
	f.events = nil
	return out
}

func (f *fixture) jobs(t *testing.T) []string {
	t.Helper()
	js, err := f.db.ListJobs(t.Context(), &scope, imprint.JobAvailable, 100)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, j := range js {
		out = append(out, string(j.Kind)+" "+j.SessionID+" "+j.EpisodeID)
	}
	return out
}

func (f *fixture) pending(t *testing.T, sessionID string) []imprint.Message {
	t.Helper()
	ms, err := f.db.PendingMessages(t.Context(), scope, sessionID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func sampleTurns() []imprint.Turn {
	return []imprint.Turn{
		{ID: "u1", Role: imprint.RoleUser, Content: "Book me a flight to Lisbon on May 20"},
		{Role: imprint.RoleAssistant, Content: ""}, // only calls a tool
		{Role: imprint.RoleTool, Content: `{"flights": ["TP123"]}`, Meta: imprint.TurnMeta{Name: "search_flights"}},
		{Role: imprint.RoleAssistant, Content: "TP123 leaves at 9:00. Shall I book it?", TS: imprint.At(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))},
	}
}

// TestAppendTurnsKeepsUnidentifiedRepeats checks that a text turn with
// neither id nor time is never mistaken for an earlier one.
func TestAppendTurnsKeepsUnidentifiedRepeats(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := 0; i < 2; i++ {
		if _, err := f.m.AppendTurns(t.Context(), scope, "s1", []imprint.Turn{{Role: imprint.RoleUser, Content: "ok"}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.pending(t, "s1")); n != 2 {
		t.Errorf("\"ok\" said twice: %d messages, want 2", n)
	}
}

func TestAppendTurnsOpensEpisodeAndRecordsText(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	ep, err := f.m.AppendTurns(ctx, scope, "s1", sampleTurns())
	if err != nil {
		t.Fatal(err)
	}
	if ep.ID == "" || ep.Status != imprint.EpisodeOpen || len(ep.Turns) != 4 {
		t.Fatalf("episode %q status %q with %d turns, want an open episode with 4", ep.ID, ep.Status, len(ep.Turns))
	}
	for i, turn := range ep.Turns {
		if turn.TS.IsZero() {
			t.Errorf("turn %d has no time", i)
		}
	}
	if d := cmp.Diff([]string{"episode.started s1 open"}, f.takeEvents()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	// Only the user and assistant text turns are L0 messages; a turn's id is
	// its message id.
	msgs := f.pending(t, "s1")
	if len(msgs) != 2 || msgs[0].ID != "u1" || msgs[1].ID != ep.Turns[3].ID || msgs[1].Content != "TP123 leaves at 9:00. Shall I book it?" {
		t.Fatalf("recorded messages = %+v, want u1 and the assistant's text under its turn id %q", msgs, ep.Turns[3].ID)
	}
	if ep.Turns[1].ID != "" || ep.Turns[2].ID != "" {
		t.Errorf("turns that are not messages got ids: %q, %q", ep.Turns[1].ID, ep.Turns[2].ID)
	}

	// Posting the same turns again (a hook that re-reads the transcript)
	// adds no turn with an id twice and records nothing new.
	again, err := f.m.AppendTurns(ctx, scope, "s1", sampleTurns())
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != ep.ID {
		t.Errorf("repost went to episode %q, want %q", again.ID, ep.ID)
	}
	if n := len(f.pending(t, "s1")); n != 2 {
		t.Errorf("%d messages after the repost, want 2", n)
	}
	for _, turn := range again.Turns {
		if turn.ID != "" {
			t.Errorf("the repost added text turn %q again", turn.ID)
		}
	}
	open, err := f.db.OpenEpisode(ctx, scope, "s1")
	if err != nil {
		t.Fatal(err)
	}
	textTurns := 0
	for _, turn := range open.Turns {
		if turn.ID != "" {
			textTurns++
		}
	}
	if textTurns != 2 || again.TurnCount != len(open.Turns) {
		t.Errorf("episode has %d text turns after the repost, want 2; %d turns, the append said %d", textTurns, len(open.Turns), again.TurnCount)
	}
	if ev := f.takeEvents(); len(ev) != 0 {
		t.Errorf("repost published %v", ev)
	}
}

func TestAppendTurnsIdenticalTextInOneCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	turns := []imprint.Turn{
		{Role: imprint.RoleUser, Content: "yes"},
		{Role: imprint.RoleAssistant, Content: "Booked."},
		{Role: imprint.RoleUser, Content: "yes"},
	}
	ep, err := f.m.AppendTurns(t.Context(), scope, "s1", turns)
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Turns) != 3 || ep.Turns[0].ID == ep.Turns[2].ID {
		t.Errorf("two identical user turns in one call: %d turns, ids %q and %q; want 3 turns, distinct ids", len(ep.Turns), ep.Turns[0].ID, ep.Turns[2].ID)
	}
	if n := len(f.pending(t, "s1")); n != 3 {
		t.Errorf("%d messages recorded, want 3", n)
	}
}

func TestAppendTurnsValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	for _, tc := range []struct {
		name, session string
		turns         []imprint.Turn
		field         string
	}{
		{"bad role", "s1", []imprint.Turn{{Role: imprint.RoleUser, Content: "hi"}, {Role: "robot", Content: "beep"}}, "turns[1].role"},
		{"no session", " ", sampleTurns(), "session_id"},
		{"no turns", "s1", nil, "turns"},
	} {
		_, err := f.m.AppendTurns(ctx, scope, tc.session, tc.turns)
		if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v, want ErrInvalid naming %s", tc.name, err, tc.field)
		}
	}
	if n := len(f.pending(t, "s1")); n != 0 {
		t.Errorf("rejected calls recorded %d messages", n)
	}
	if _, err := f.db.OpenEpisode(ctx, scope, "s1"); !errors.Is(err, imprint.ErrNotFound) {
		t.Errorf("rejected calls opened an episode: %v", err)
	}
}

func TestFinalize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		closedBy imprint.ClosedBy
		status   imprint.EpisodeStatus
		events   []string
	}{
		{"", imprint.EpisodeFinalized, []string{"episode.finalized s1 finalized"}},
		{imprint.ClosedAbandoned, imprint.EpisodeAbandoned, []string{"episode.finalized s1 abandoned", "episode.abandoned s1 abandoned"}},
	} {
		t.Run(string(tc.status), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ctx := t.Context()
			ep, err := f.m.AppendTurns(ctx, scope, "s1", sampleTurns())
			if err != nil {
				t.Fatal(err)
			}
			f.takeEvents()
			closed, err := f.m.Finalize(ctx, scope, "s1", tc.closedBy)
			if err != nil {
				t.Fatal(err)
			}
			if closed.ID != ep.ID || closed.Status != tc.status || len(closed.Turns) != 4 {
				t.Errorf("closed %q status %q with %d turns", closed.ID, closed.Status, len(closed.Turns))
			}
			if d := cmp.Diff(tc.events, f.takeEvents()); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{"capture s1 " + ep.ID}, f.jobs(t)); d != "" {
				t.Errorf("jobs (-want +got):\n%s", d)
			}
			if f.wakes == 0 {
				t.Error("the scheduler was not woken after the capture job")
			}
			if _, err := f.m.Finalize(ctx, scope, "s1", tc.closedBy); !errors.Is(err, imprint.ErrNotFound) {
				t.Errorf("second Finalize: %v, want ErrNotFound", err)
			}
			// The next turn opens a new episode.
			next, err := f.m.AppendTurns(ctx, scope, "s1", []imprint.Turn{{Role: imprint.RoleUser, Content: "Now a hotel"}})
			if err != nil {
				t.Fatal(err)
			}
			if next.ID == ep.ID || len(next.Turns) != 1 {
				t.Errorf("append after finalize: episode %q with %d turns, want a new one with 1", next.ID, len(next.Turns))
			}
		})
	}
	t.Run("invalid closed_by", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		if _, err := f.m.AppendTurns(t.Context(), scope, "s1", sampleTurns()); err != nil {
			t.Fatal(err)
		}
		if _, err := f.m.Finalize(t.Context(), scope, "s1", "done"); !errors.Is(err, imprint.ErrInvalid) {
			t.Errorf("Finalize(done): %v, want ErrInvalid", err)
		}
		if _, err := f.db.OpenEpisode(t.Context(), scope, "s1"); err != nil {
			t.Errorf("the episode is no longer open: %v", err)
		}
	})
}

func TestEnd(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	ep, err := f.m.AppendTurns(ctx, scope, "s1", sampleTurns())
	if err != nil {
		t.Fatal(err)
	}
	id, pending, err := f.m.End(ctx, scope, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if id == nil || *id != ep.ID || pending != 2 {
		t.Errorf("End = %v, %d; want episode %q and 2 pending", id, pending, ep.ID)
	}
	want := []string{"extract s1 ", "capture s1 " + ep.ID}
	if d := cmp.Diff(want, f.jobs(t)); d != "" {
		t.Errorf("jobs after End (-want +got):\n%s", d)
	}
	js, err := f.db.ListJobs(ctx, &scope, imprint.JobAvailable, 1)
	if err != nil || len(js) != 1 || js[0].UniqueKey != imprint.ExtractJobKey(scope, "s1") {
		t.Errorf("extract job = %+v, %v; want key %q", js, err, imprint.ExtractJobKey(scope, "s1"))
	}
	// Ending again: nothing open, the queued extraction is reused.
	id, pending, err = f.m.End(ctx, scope, "s1")
	if err != nil || id != nil || pending != 2 {
		t.Errorf("second End = %v, %d, %v; want nil, 2, nil", id, pending, err)
	}
	if d := cmp.Diff(want, f.jobs(t)); d != "" {
		t.Errorf("jobs after the second End (-want +got):\n%s", d)
	}
	// A session with nothing recorded.
	id, pending, err = f.m.End(ctx, scope, "empty")
	if err != nil || id != nil || pending != 0 {
		t.Errorf("End of an unknown session = %v, %d, %v; want nil, 0, nil", id, pending, err)
	}
	if n := len(f.jobs(t)); n != 2 {
		t.Errorf("End of an empty session queued work: %d jobs", n)
	}
}

// TestEndThroughIngest: with Ingest set, End's extraction goes through
// it (to the job engine the server runs), joining one already queued.
func TestEndThroughIngest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	jobs := &countingJobs{db: f.db}
	rec := record.NewRecorder(record.Deps{Store: f.db}, record.Config{EveryNRounds: 5})
	m := session.NewManager(session.ManagerDeps{Store: f.db, Recorder: recorderAdapter{rec}, Ingest: &ingest.Due{Jobs: jobs}}, session.ManagerConfig{})
	ep, err := m.AppendTurns(ctx, scope, "s1", sampleTurns())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, pending, err := m.End(ctx, scope, "s1"); err != nil || pending != 2 {
			t.Fatalf("End = %d pending, %v; want 2, nil", pending, err)
		}
	}
	if jobs.n != 2 {
		t.Errorf("End enqueued %d extractions through Ingest, want 2 (one per call)", jobs.n)
	}
	want := []string{"extract s1 ", "capture s1 " + ep.ID}
	if d := cmp.Diff(want, f.jobs(t)); d != "" {
		t.Errorf("jobs after End (-want +got):\n%s", d)
	}
}

// TestEndWithoutIngest: a manager given no Ingest cannot queue the
// extraction End forces; End says so (ErrUnavailable) after closing the
// episode with its capture job, and the messages stay pending.
func TestEndWithoutIngest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	rec := record.NewRecorder(record.Deps{Store: f.db}, record.Config{EveryNRounds: 5})
	m := session.NewManager(session.ManagerDeps{Store: f.db, Recorder: recorderAdapter{rec}}, session.ManagerConfig{})
	ep, err := m.AppendTurns(ctx, scope, "s1", sampleTurns())
	if err != nil {
		t.Fatal(err)
	}
	id, pending, err := m.End(ctx, scope, "s1")
	if !errors.Is(err, imprint.ErrUnavailable) || id == nil || *id != ep.ID || pending != 2 {
		t.Fatalf("End = %v, %d, %v; want the episode closed, 2 pending and ErrUnavailable", id, pending, err)
	}
	if d := cmp.Diff([]string{"capture s1 " + ep.ID}, f.jobs(t)); d != "" {
		t.Errorf("jobs after End (-want +got):\n%s", d)
	}
	if n, err := f.db.CountPending(ctx, scope, "s1"); err != nil || n != 2 {
		t.Errorf("pending after End = %d, %v; want 2", n, err)
	}
}

// countingJobs is the store's job queue, counting enqueues.
type countingJobs struct {
	db *sqlite.DB
	n  int
}

func (j *countingJobs) Enqueue(ctx context.Context, job imprint.Job) (imprint.Job, error) {
	j.n++
	job, _, err := j.db.EnqueueJob(ctx, job)
	return job, err
}

func TestFinalizeIdle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	for _, s := range []string{"s1", "s2"} {
		if _, err := f.m.AppendTurns(ctx, scope, s, sampleTurns()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.m.Finalize(ctx, scope, "s2", imprint.ClosedFinalized); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.AppendTurns(ctx, scope, "s3", sampleTurns()); err != nil {
		t.Fatal(err)
	}
	f.takeEvents()
	n, err := f.m.FinalizeIdle(ctx, time.Now())
	if err != nil || n != 0 {
		t.Errorf("FinalizeIdle(now) = %d, %v; want nothing idle yet", n, err)
	}
	n, err = f.m.FinalizeIdle(ctx, time.Now().Add(session.DefaultEpisodeIdle+time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("FinalizeIdle(after the idle time) = %d, %v; want 2", n, err)
	}
	if d := cmp.Diff([]string{"episode.finalized s1 finalized", "episode.finalized s3 finalized"}, f.takeEvents()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	captures := 0
	for _, j := range f.jobs(t) {
		if strings.HasPrefix(j, "capture ") {
			captures++
		}
	}
	if captures != 3 {
		t.Errorf("%d capture jobs, want 3 (one finalize, two idle)", captures)
	}
	if n, err := f.m.FinalizeIdle(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("FinalizeIdle again = %d, %v; want 0", n, err)
	}
}
