package schedule

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/session"
)

func jobKeys(t *testing.T, st imprint.JobStore) []string {
	t.Helper()
	out := []string{}
	for _, j := range jobsIn(t, st, imprint.JobAvailable) {
		out = append(out, string(j.Kind)+" "+j.SessionID)
	}
	sort.Strings(out)
	return out
}

func record(t *testing.T, db imprint.Store, sessionID string, ids ...string) {
	t.Helper()
	var msgs []imprint.Message
	for _, id := range ids {
		msgs = append(msgs, imprint.Message{ID: id, Role: imprint.RoleUser, Content: "message " + id})
	}
	if _, err := db.AppendMessages(t.Context(), scope, sessionID, msgs); err != nil {
		t.Fatal(err)
	}
}

func TestPlannerEnqueuesExtraction(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	ctx := t.Context()
	record(t, db, "due", "d1", "d2")
	if err := db.MarkExtractionDue(ctx, scope, "due", true); err != nil {
		t.Fatal(err)
	}
	record(t, db, "quiet", "q1")
	p := &Planner{Store: db, Scheduler: New(db, fastConfig(), nil), ExtractIdle: 10 * time.Minute}

	now := time.Now()
	for range 2 { // a second tick queues nothing new
		if err := p.Tick(ctx, now); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"extract due"}, jobKeys(t, db)); d != "" {
			t.Errorf("jobs after a tick now (-want +got):\n%s", d)
		}
	}
	// Ten minutes of silence later the quiet session is extracted too.
	if err := p.Tick(ctx, now.Add(11*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"extract due", "extract quiet"}, jobKeys(t, db)); d != "" {
		t.Errorf("jobs after the idle time (-want +got):\n%s", d)
	}
	js := jobsIn(t, db, imprint.JobAvailable)
	for _, j := range js {
		if j.UniqueKey != imprint.ExtractJobKey(scope, j.SessionID) || j.Scope != scope {
			t.Errorf("job %+v: want the session's key and scope", j)
		}
	}
}

func TestPlannerFinalizesIdleEpisodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		episodeIdle time.Duration
		after       time.Duration
		want        []string
	}{
		{"manager idle time", 0, 31 * time.Minute, []string{"capture s1"}},
		{"not idle yet", 0, 29 * time.Minute, []string{}},
		{"planner override", time.Minute, 2 * time.Minute, []string{"capture s1"}},
		{"off", -1, 24 * time.Hour, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := openStore(t)
			finalized := 0
			bus := imprint.PublisherFunc(func(_ context.Context, e imprint.Event) {
				if e.Type == imprint.EventEpisodeFinalized {
					finalized++
				}
			})
			m := session.NewManager(session.ManagerDeps{Store: db, Events: bus}, session.ManagerConfig{EpisodeIdle: 30 * time.Minute})
			if _, err := m.AppendTurns(t.Context(), scope, "s1", []imprint.Turn{{Role: imprint.RoleTool, Content: "ok"}}); err != nil {
				t.Fatal(err)
			}
			p := &Planner{Store: db, Scheduler: New(db, fastConfig(), nil), Manager: m, EpisodeIdle: tc.episodeIdle}
			if err := p.Tick(t.Context(), time.Now().Add(tc.after)); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, jobKeys(t, db)); d != "" {
				t.Errorf("jobs (-want +got):\n%s", d)
			}
			if finalized != len(tc.want) {
				t.Errorf("%d episode.finalized events, want %d", finalized, len(tc.want))
			}
		})
	}
}

// TestPlannerRunsEndToEnd runs the planner and the scheduler together: a
// quiet session gets extracted once by the handler.
func TestPlannerRunsEndToEnd(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	record(t, db, "s1", "m1", "m2")
	s := New(db, fastConfig(), nil)
	extracted := make(chan string, 10)
	s.Handle(imprint.JobExtract, func(ctx context.Context, j imprint.Job) error {
		pend, err := db.PendingMessages(ctx, j.Scope, j.SessionID, 0)
		if err != nil {
			return err
		}
		if len(pend) > 0 {
			if err := db.AdvanceCursor(ctx, j.Scope, j.SessionID, pend[len(pend)-1].Seq, "", time.Now()); err != nil {
				return err
			}
		}
		extracted <- j.SessionID
		return nil
	})
	events, _ := start(t, s)
	// ExtractIdle of 1ns: the session is quiet at once.
	p := &Planner{Store: db, Scheduler: s, ExtractIdle: time.Nanosecond}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, 5*time.Millisecond) }()
	if e := next(t, events); e.name != EventDone {
		t.Fatalf("event %s: %v", e.name, e.err)
	}
	if got := <-extracted; got != "s1" {
		t.Errorf("extracted %q, want s1", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Planner.Run = %v, want nil", err)
	}
	n, err := db.CountPending(t.Context(), scope, "s1")
	if err != nil || n != 0 {
		t.Errorf("pending after the run = %d, %v; want 0", n, err)
	}
}
