package extract

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// cancelAtStore is the test store (no optional capabilities) that stalls
// its first PutMemory (so the planner fills its channel and the next batch
// holds many sessions) and cancels the extraction at the first PutMemory
// of a memory of session at.
type cancelAtStore struct {
	imprint.Store
	at     string
	cancel context.CancelFunc
	mu     sync.Mutex
	puts   int
}

func (s *cancelAtStore) PutMemory(ctx context.Context, m imprint.Memory, supersede []string) error {
	s.mu.Lock()
	s.puts++
	first := s.puts == 1
	s.mu.Unlock()
	if first {
		time.Sleep(300 * time.Millisecond)
	}
	if m.SessionID == s.at {
		s.cancel()
		return context.Canceled
	}
	return s.Store.PutMemory(ctx, m, supersede)
}

// TestCancelMovesStoredSessionsCursors cancels an extraction while it
// writes the memories of a session in the middle of a batch: the sessions
// before it, whose windows were all stored, have their cursors moved and
// their windows reported as succeeded, as when each session's cursor moved
// as soon as the next one began (a review finding).
func TestCancelMovesStoredSessionsCursors(t *testing.T) {
	e, sids, failedRes, _ := extractCancelled(t, func(e *testEnv, cancel context.CancelFunc) imprint.Store {
		return &cancelAtStore{Store: e.store, at: "r09", cancel: cancel}
	})
	for _, sid := range sids[:9] {
		if n := e.pending(sid); n != 0 || failedRes[sid] > 0 {
			t.Errorf("session %s (stored completely before r09): %d messages pending, %d windows reported failed", sid, n, failedRes[sid])
		}
	}
}

// extractCancelled records twelve sessions and extracts them over the
// store that wrap makes of the test store with the extraction's cancel,
// which must cancel it; it returns the env, the sessions and how many
// window results of each session failed and succeeded.
func extractCancelled(t *testing.T, wrap func(e *testEnv, cancel context.CancelFunc) imprint.Store) (*testEnv, []string, map[string]int, map[string]int) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.MaxMessagesPerExtraction = 2
	e := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
	sids := recordSessionsOf(e, 12)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	e.deps.Store = wrap(e, cancel)
	e.runner = NewRunner(e.deps, e.cfg)
	failedRes, okRes := map[string]int{}, map[string]int{}
	err := e.runner.ExtractSessions(ctx, e.scope, sids, func(r Result) {
		if r.Success {
			okRes[r.SessionID]++
		} else {
			failedRes[r.SessionID]++
		}
	}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ExtractSessions = %v", err)
	}
	return e, sids, failedRes, okRes
}

// stopTwiceStore fails the PutMemory of the second window of session "a"
// and every AdvanceCursor of "a".
type stopTwiceStore struct {
	imprint.Store
	mu   sync.Mutex
	puts int
}

func (s *stopTwiceStore) PutMemory(ctx context.Context, m imprint.Memory, supersede []string) error {
	s.mu.Lock()
	s.puts++
	n := s.puts
	s.mu.Unlock()
	if n == 2 {
		return fmt.Errorf("disk full: %w", imprint.ErrUnavailable)
	}
	return s.Store.PutMemory(ctx, m, supersede)
}

func (s *stopTwiceStore) AdvanceCursor(ctx context.Context, scope imprint.Scope, sid string, toSeq int64, scene string, at time.Time) error {
	return fmt.Errorf("database is locked: %w", imprint.ErrUnavailable)
}

// TestSessionStoppedOnce fails a window after a stored window of the same
// session whose cursor move (the flush before the failed window) fails too:
// the session is reported stopped once (a review finding; twice before).
func TestSessionStoppedOnce(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxMessagesPerExtraction = 1
	e := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
	e.record("a", e.baseDay, "My name is Alice.", "I work as a nurse in Boston.", "I'm allergic to peanuts.")
	e.deps.Store = &stopTwiceStore{Store: e.store}
	e.runner = NewRunner(e.deps, e.cfg)
	var stopped []string
	if err := e.runner.ExtractSessions(e.ctx, e.scope, []string{"a"}, nil, func(sid string, err error) {
		stopped = append(stopped, fmt.Sprintf("%s: %v", sid, err))
	}); err != nil {
		t.Fatal(err)
	}
	if len(stopped) != 1 {
		t.Errorf("stopped called %d times: %q", len(stopped), stopped)
	}
}
