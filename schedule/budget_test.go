package schedule

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// TestBudgetRefusalWaitsWithoutAttempts: a handler refused by the LLM
// budget more times than the job has attempts makes the job wait
// (EventWait, run again after the budget's time) and never fail; the
// attempts it waited do not count. Both engines.
func TestBudgetRefusalWaitsWithoutAttempts(t *testing.T) {
	t.Parallel()
	const refusals = 4
	for _, name := range []string{"table", "river"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := fastConfig()
			cfg.MaxAttempts = 2
			cfg.BudgetRecheck = time.Millisecond // BudgetSnooze still waits a second
			var eng Engine
			var events <-chan event
			if name == "table" {
				s := New(openStore(t), cfg, nil)
				eng = s
				events, _ = start(t, s)
			} else {
				_, r := openRiver(t, filepath.Join(t.TempDir(), "imprint.db"), cfg)
				eng = r
				events, _ = start(t, r)
			}
			var calls atomic.Int64
			var lastAttempt atomic.Int64
			eng.Handle(imprint.JobCapture, func(ctx context.Context, j imprint.Job) error {
				lastAttempt.Store(int64(j.Attempts))
				if calls.Add(1) <= refusals {
					return &imprint.BudgetError{Scope: j.Scope, Limit: "calls_per_hour", Until: time.Now().Add(time.Millisecond)}
				}
				return nil
			})
			if _, err := eng.Enqueue(t.Context(), imprint.Job{Kind: imprint.JobCapture, Scope: scope, SessionID: "s", EpisodeID: "e"}); err != nil {
				t.Fatal(err)
			}
			waits := 0
			for {
				e := next(t, events)
				if e.name == EventWait {
					waits++
					continue
				}
				if e.name != EventDone {
					t.Fatalf("event %s (%v) after %d waits, want %s or %s", e.name, e.err, waits, EventWait, EventDone)
				}
				break
			}
			if waits != refusals || lastAttempt.Load() != 1 {
				t.Errorf("%d waits, last attempt %d; want %d waits and the run counted as attempt 1", waits, lastAttempt.Load(), refusals)
			}
		})
	}
}

// TestBudgetSnooze: how long a refused job waits.
func TestBudgetSnooze(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		err     error
		want    time.Duration
		waiting bool
	}{
		{"not a budget error", imprint.ErrLLMUnavailable, 0, false},
		{"frees up in 10 s", &imprint.BudgetError{Until: now.Add(10 * time.Second)}, 10 * time.Second, true},
		{"frees up in an hour: recheck", &imprint.BudgetError{Until: now.Add(time.Hour)}, time.Minute, true},
		{"already free: a second", &imprint.BudgetError{Until: now.Add(-time.Minute)}, time.Second, true},
		{"never frees up: recheck", &imprint.BudgetError{}, time.Minute, true},
	} {
		d, ok := BudgetSnooze(tt.err, now, time.Minute)
		if d != tt.want || ok != tt.waiting {
			t.Errorf("%s: %v %v, want %v %v", tt.name, d, ok, tt.want, tt.waiting)
		}
	}
}
