package extract

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	imprint "github.com/imprint-dev/imprint"
)

// pendingBatchStore is the test store with PendingBatch, made of its own
// GetSession and PendingMessages, counting the planner's reads: the
// batches it asked for and the sessions it read one by one.
type pendingBatchStore struct {
	*spyStore
	mu               sync.Mutex
	batches, singles int
	fail             bool // PendingBatch fails
}

func (s *pendingBatchStore) SupportsPendingBatch() bool { return true }

func (s *pendingBatchStore) PendingBatch(ctx context.Context, scope imprint.Scope, ids []string, limit int) ([]imprint.SessionPending, error) {
	s.mu.Lock()
	s.batches++
	fail := s.fail
	s.mu.Unlock()
	if fail {
		return nil, errors.New("the batch read failed")
	}
	out := make([]imprint.SessionPending, len(ids))
	for i, id := range ids {
		sess, err := s.spyStore.GetSession(ctx, scope, id)
		switch {
		case err == nil:
			out[i].Session, out[i].Found = sess, true
		case !errors.Is(err, imprint.ErrNotFound):
			return nil, err
		}
		if out[i].Pending, err = s.spyStore.PendingMessages(ctx, scope, id, limit); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *pendingBatchStore) PendingMessages(ctx context.Context, scope imprint.Scope, id string, limit int) ([]imprint.Message, error) {
	s.mu.Lock()
	s.singles++
	s.mu.Unlock()
	return s.spyStore.PendingMessages(ctx, scope, id, limit)
}

// TestExtractSessionsReadsPendingInBatches extracts 20 sessions over a
// store with PendingBatch: the planner reads them in two batches (16 and
// 4) and none one by one, and the memories, window results and records
// lines are those of the same sessions over the store without it. When
// the batch read fails, each session is read alone and nothing changes.
func TestExtractSessionsReadsPendingInBatches(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.MaxMessagesPerExtraction = 4
	cfg.MaxBackgroundMessages = 3
	run := func(batched, fail bool) (*testEnv, *pendingBatchStore, []windowOutcome) {
		e := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
		var ps *pendingBatchStore
		if batched {
			ps = &pendingBatchStore{spyStore: e.store, fail: fail}
			e.deps.Store = ps
			e.runner = NewRunner(e.deps, cfg)
		}
		var sessions []string
		for i := range 20 {
			sid := fmt.Sprintf("s-%02d", i)
			sessions = append(sessions, sid)
			e.record(sid, e.baseDay.Add(time.Duration(i)*time.Hour), facts[i%len(facts)], "ok", facts[(i+3)%len(facts)], facts[(i+7)%len(facts)])
		}
		var got []windowOutcome
		err := e.runner.ExtractSessions(e.ctx, e.scope, sessions, func(r Result) { got = append(got, outcome(r)) },
			func(sid string, err error) { t.Errorf("session %s stopped: %v", sid, err) })
		if err != nil {
			t.Fatal(err)
		}
		for _, sid := range sessions {
			if n := e.pending(sid); n != 0 {
				t.Errorf("session %s: %d messages still pending", sid, n)
			}
		}
		return e, ps, got
	}
	plain, _, want := run(false, false)
	for _, fail := range []bool{false, true} {
		e, ps, got := run(true, fail)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("fail %v: window results (-without PendingBatch +with):\n%s", fail, diff)
		}
		if diff := cmp.Diff(plain.live(), e.live(), memoryView); diff != "" {
			t.Errorf("fail %v: memories (-without PendingBatch +with):\n%s", fail, diff)
		}
		if diff := cmp.Diff(shardLines(t, plain.dir), shardLines(t, e.dir)); diff != "" {
			t.Errorf("fail %v: records lines (-without PendingBatch +with):\n%s", fail, diff)
		}
		wantSingles := 0
		if fail {
			wantSingles = 20
		}
		if ps.batches != 2 || ps.singles != wantSingles {
			t.Errorf("fail %v: %d batch reads and %d sessions read alone, want 2 and %d", fail, ps.batches, ps.singles, wantSingles)
		}
	}
	if len(want) < 20 {
		t.Fatalf("only %d windows", len(want))
	}
}
