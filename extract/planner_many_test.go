package extract

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

// The two-session planner over many sessions (more than one
// prefetched group), windows in order, compared with one by one; a failing
// read of one session; cancellation at several points.

// readFailStore hides the optional capabilities (so each session reads its
// own page) and fails the pending read of one session.
type readFailStore struct {
	imprint.Store
	fail string
}

func (s readFailStore) PendingMessages(ctx context.Context, scope imprint.Scope, sid string, limit int) ([]imprint.Message, error) {
	if sid == s.fail {
		return nil, fmt.Errorf("read %s: %w", sid, imprint.ErrUnavailable)
	}
	return s.Store.PendingMessages(ctx, scope, sid, limit)
}

// recordSessionsOf records n sessions of three to seven facts each, an
// hour apart, and returns their ids.
func recordSessionsOf(e *testEnv, n int) []string {
	var sids []string
	for k := range n {
		sid := fmt.Sprintf("r%02d", k)
		var cs []string
		for i := range 3 + k%5 {
			cs = append(cs, facts[(k+i)%len(facts)])
		}
		e.record(sid, e.baseDay.Add(time.Duration(k)*time.Hour), cs...)
		sids = append(sids, sid)
	}
	return sids
}

// TestPlannerManySessionsLikeOneByOne checks that extracting more
// sessions than one prefetched group at once gives the results, memories
// and record lines of extracting them one by one, with and without the
// batch read.
func TestPlannerManySessionsLikeOneByOne(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxMessagesPerExtraction = 2
	for _, wrap := range []bool{false, true} {
		t.Run(fmt.Sprint("hide-capabilities=", wrap), func(t *testing.T) {
			one := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
			many := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
			if wrap {
				many.deps.Store = readFailStore{Store: many.store}
				many.runner = NewRunner(many.deps, many.cfg)
			}
			sids := recordSessionsOf(one, 37)
			recordSessionsOf(many, 37)
			likeOneByOne(t, one, many, sids)
		})
	}
}

// likeOneByOne extracts sids one by one in one and together in many (the
// same sessions recorded in both) and checks that the window results,
// memories and record lines are the same.
func likeOneByOne(t *testing.T, one, many *testEnv, sids []string) {
	t.Helper()
	var want, got []windowOutcome
	for _, sid := range sids {
		if err := one.runner.ExtractPending(one.ctx, one.scope, sid, func(r Result) { want = append(want, outcome(r)) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := many.runner.ExtractSessions(many.ctx, many.scope, sids, func(r Result) { got = append(got, outcome(r)) },
		func(sid string, err error) { t.Errorf("session %s stopped: %v", sid, err) }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("window results (-one by one +together):\n%s", diff)
	}
	if diff := cmp.Diff(one.live(), many.live(), memoryView); diff != "" {
		t.Errorf("memories (-one by one +together):\n%s", diff)
	}
	if diff := cmp.Diff(shardLines(t, one.dir), shardLines(t, many.dir)); diff != "" {
		t.Errorf("records lines (-one by one +together):\n%s", diff)
	}
}

// TestPlannerReadFailsForOneSession checks that a failed read stops only
// its session, the others extracted in order.
func TestPlannerReadFailsForOneSession(t *testing.T) {
	e := newTestEnv(t, DefaultConfig(), withoutLLM(), withEmbedder())
	sids := recordSessionsOf(e, 20)
	e.deps.Store = readFailStore{Store: e.store, fail: "r05"}
	e.runner = NewRunner(e.deps, e.cfg)
	var stopped []string
	var order []string
	err := e.runner.ExtractSessions(e.ctx, e.scope, sids, func(r Result) {
		if len(order) == 0 || order[len(order)-1] != r.SessionID {
			order = append(order, r.SessionID)
		}
	}, func(sid string, err error) {
		if !errors.Is(err, imprint.ErrUnavailable) {
			t.Errorf("stopped %s with %v", sid, err)
		}
		stopped = append(stopped, sid)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(stopped, []string{"r05"}) {
		t.Errorf("stopped %v, want r05", stopped)
	}
	var wantOrder []string
	for _, s := range sids {
		if s != "r05" {
			wantOrder = append(wantOrder, s)
		}
	}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("session order (-want +got):\n%s", diff)
	}
}

// TestPlannerCancelledAnywhere cancels the extraction at many points: it
// returns context.Canceled, without hanging or leaving goroutines.
func TestPlannerCancelledAnywhere(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxMessagesPerExtraction = 2
	for after := range 12 {
		t.Run(fmt.Sprint(after), func(t *testing.T) {
			e := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
			sids := recordSessionsOf(e, 40)
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			n := 0
			done := make(chan error, 1)
			go func() {
				done <- e.runner.ExtractSessions(ctx, e.scope, sids, func(Result) {
					n++
					if n == after*3+1 {
						cancel()
					}
				}, nil)
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("ExtractSessions = %v, want context.Canceled", err)
				}
			case <-time.After(30 * time.Second):
				buf := make([]byte, 1<<20)
				t.Fatalf("ExtractSessions hung after cancel:\n%s", buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(20 * time.Millisecond)
			if a := runtime.NumGoroutine(); a > before+1 {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines before, %d after:\n%s", before, a, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}
