package extract

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/sqlite"
)

// cursorBatchStore is the test store with the cursors moved together
// (imprint.CursorBatchAdvancer, through the real store), counting the
// calls: AdvanceCursors fails while failBatch is set (moving nothing, as a
// failed transaction), AdvanceCursor fails for the session failOne.
type cursorBatchStore struct {
	imprint.Store
	db        *sqlite.DB
	failBatch atomic.Bool
	failOne   atomic.Value // string
	batches   atomic.Int32
	ones      atomic.Int32
}

func (s *cursorBatchStore) SupportsCursorBatch() bool { return true }

func (s *cursorBatchStore) AdvanceCursors(ctx context.Context, scope imprint.Scope, moves []imprint.CursorMove) error {
	s.batches.Add(1)
	if s.failBatch.Load() {
		return fmt.Errorf("database is locked: %w", imprint.ErrUnavailable)
	}
	return s.db.AdvanceCursors(ctx, scope, moves)
}

func (s *cursorBatchStore) AdvanceCursor(ctx context.Context, scope imprint.Scope, sessionID string, toSeq int64, scene string, at time.Time) error {
	s.ones.Add(1)
	if f, _ := s.failOne.Load().(string); f == sessionID {
		return fmt.Errorf("database is locked: %w", imprint.ErrUnavailable)
	}
	return s.Store.AdvanceCursor(ctx, scope, sessionID, toSeq, scene, at)
}

func newCursorBatchEnv(t *testing.T) (*testEnv, *cursorBatchStore) {
	cfg := DefaultConfig()
	cfg.MaxMessagesPerExtraction = 2
	e := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
	cs := &cursorBatchStore{Store: e.store, db: e.db}
	cs.failOne.Store("")
	e.deps.Store = cs
	e.runner = NewRunner(e.deps, e.cfg)
	return e, cs
}

// TestCursorsMoveTogether checks that the planner moves the cursors of the
// sessions it wrote together in a few AdvanceCursors calls, none one by
// one, with the results, memories and cursors of extracting the sessions
// one by one.
func TestCursorsMoveTogether(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxMessagesPerExtraction = 2
	one := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
	many, cs := newCursorBatchEnv(t)
	sids := recordSessionsOf(one, 37)
	recordSessionsOf(many, 37)
	likeOneByOne(t, one, many, sids)
	for _, sid := range sids {
		a, err := one.db.GetSession(one.ctx, one.scope, sid)
		if err != nil {
			t.Fatal(err)
		}
		b, err := many.db.GetSession(many.ctx, many.scope, sid)
		if err != nil {
			t.Fatal(err)
		}
		if a.Cursor != b.Cursor || a.LastSceneName != b.LastSceneName || b.ExtractionDue {
			t.Errorf("session %s: cursor %d scene %q due %v, one by one: cursor %d scene %q", sid,
				b.Cursor, b.LastSceneName, b.ExtractionDue, a.Cursor, a.LastSceneName)
		}
	}
	if n := cs.ones.Load(); n != 0 {
		t.Errorf("%d cursors moved one by one, want all together", n)
	}
	if n := cs.batches.Load(); n == 0 || n >= int32(len(sids)) {
		t.Errorf("%d AdvanceCursors calls for %d sessions, want a few", n, len(sids))
	}
}

// TestCursorBatchFailsOneSessionStops checks that when moving the cursors
// together fails, they are moved one by one: only the session whose own
// move fails stops, its messages stay pending, and extracting again moves
// it without a duplicate memory.
func TestCursorBatchFailsOneSessionStops(t *testing.T) {
	e, cs := newCursorBatchEnv(t)
	sids := recordSessionsOf(e, 20)
	cs.failBatch.Store(true)
	cs.failOne.Store("r05")
	var stopped []string
	if err := e.runner.ExtractSessions(e.ctx, e.scope, sids, nil, func(sid string, err error) {
		stopped = append(stopped, sid)
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stopped, []string{"r05"}) {
		t.Errorf("stopped %v, want r05", stopped)
	}
	for _, sid := range sids {
		if n := e.pending(sid); (n > 0) != (sid == "r05") {
			t.Errorf("session %s: %d messages pending", sid, n)
		}
	}
	if cs.batches.Load() == 0 {
		t.Fatal("no AdvanceCursors call to fail")
	}
	before := len(e.live())
	cs.failBatch.Store(false)
	cs.failOne.Store("")
	if err := e.runner.ExtractSessions(e.ctx, e.scope, []string{"r05"}, nil, func(sid string, err error) {
		t.Errorf("session %s stopped again: %v", sid, err)
	}); err != nil {
		t.Fatal(err)
	}
	if n := e.pending("r05"); n != 0 {
		t.Errorf("r05: %d messages pending after extracting again", n)
	}
	if after := len(e.live()); after != before {
		t.Errorf("%d live memories after extracting r05 again, %d before: a duplicate", after, before)
	}
}
