package extract

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/sqlite"
)

// cancelInBatchStore cancels the extraction during its first
// AdvanceCursors of several sessions (the call then fails with the context
// error, moving nothing) after stalling the first PutMemory, so that the
// planner's next batch holds many sessions.
type cancelInBatchStore struct {
	imprint.Store
	db     *sqlite.DB
	cancel context.CancelFunc
	calls  atomic.Int32
	puts   atomic.Int32
}

func (s *cancelInBatchStore) PutMemory(ctx context.Context, m imprint.Memory, supersede []string) error {
	if s.puts.Add(1) == 1 {
		time.Sleep(300 * time.Millisecond) // the planner fills its channel: a batch of many sessions
	}
	return s.Store.PutMemory(ctx, m, supersede)
}

func (s *cancelInBatchStore) SupportsCursorBatch() bool { return true }

func (s *cancelInBatchStore) AdvanceCursors(ctx context.Context, scope imprint.Scope, moves []imprint.CursorMove) error {
	if len(moves) > 1 && s.calls.Add(1) == 1 {
		s.cancel() // the caller cancels during the round trip
	}
	return s.db.AdvanceCursors(ctx, scope, moves)
}

// TestCancelDuringAdvanceCursors checks that a cancellation arriving while
// the cursors move still leaves no session whose memories are stored
// pending (a review finding: before, the one-by-one fallback ran with the
// cancelled context and every session of the batch stayed pending).
func TestCancelDuringAdvanceCursors(t *testing.T) {
	e, sids, failedRes, okRes := extractCancelled(t, func(e *testEnv, cancel context.CancelFunc) imprint.Store {
		return &cancelInBatchStore{Store: e.store, db: e.db, cancel: cancel}
	})
	left := 0
	for _, sid := range sids {
		mems := 0
		all, _ := e.store.ListMemories(context.Background(), e.scope, imprint.MemoryFilter{})
		for _, m := range all {
			if m.SessionID == sid {
				mems++
			}
		}
		t.Logf("session %s: %d pending, %d memories stored, %d ok / %d failed results", sid, e.pending(sid), mems, okRes[sid], failedRes[sid])
		if e.pending(sid) != 0 && mems > 0 {
			left++
		}
	}
	if left > 0 {
		t.Errorf("%d sessions whose memories are stored left pending after a cancellation during AdvanceCursors", left)
	}
}
