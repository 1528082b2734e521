package extract

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// closingStore is the real store, its session reads counted, with a close
// that notes every read still running or started after it.
type closingStore struct {
	imprint.Store
	// onRead, when set, runs at the start of a read of a session.
	onRead func(ctx context.Context, sid string)

	mu       sync.Mutex
	closed   chan struct{}
	inflight map[string]int
	late     []string
}

func newClosingStore(s imprint.Store) *closingStore {
	return &closingStore{Store: s, closed: make(chan struct{}), inflight: map[string]int{}}
}

func (s *closingStore) begin(what string) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closed:
		s.late = append(s.late, what+" started after close")
	default:
	}
	s.inflight[what]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.inflight[what]--
	}
}

func (s *closingStore) GetSession(ctx context.Context, scope imprint.Scope, id string) (imprint.Session, error) {
	defer s.begin("GetSession " + id)()
	if s.onRead != nil {
		s.onRead(ctx, id)
	}
	return s.Store.GetSession(ctx, scope, id)
}

func (s *closingStore) PendingMessages(ctx context.Context, scope imprint.Scope, sid string, limit int) ([]imprint.Message, error) {
	defer s.begin("PendingMessages " + sid)()
	return s.Store.PendingMessages(ctx, scope, sid, limit)
}

// close marks the store closed, noting the reads still running.
func (s *closingStore) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.closed)
	for what, n := range s.inflight {
		if n > 0 {
			s.late = append(s.late, what+" running at close")
		}
	}
}

func (s *closingStore) lateReads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.late...)
}

// ExtractSessions stopped early (its context cancelled while it commits
// the first session) returns only once the planning of the sessions after
// it has stopped: a caller closing the store right after the return sees
// no read of it.
func TestExtractSessionsReadsNothingAfterReturn(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	e := newTestEnv(t, cfg, withoutLLM())
	e.record("s-first", e.baseDay, "My name is Alice.", "I work as a nurse in Boston.")
	e.record("s-second", e.baseDay.Add(time.Hour), "I'm allergic to peanuts.")

	store := newClosingStore(e.db)
	deps := e.deps
	deps.Store = store
	r := NewRunner(deps, cfg)

	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	planning := make(chan struct{})
	store.onRead = func(_ context.Context, sid string) {
		if sid != "s-second" {
			return
		}
		// The planner reads the second session while the first commits;
		// the read lasts until the store is closed (a read that outlives
		// ExtractSessions is then seen running), or a while when it is
		// waited for.
		close(planning)
		select {
		case <-store.closed:
		case <-time.After(200 * time.Millisecond):
		}
	}
	var results int
	err := r.ExtractSessions(ctx, e.scope, []string{"s-first", "s-second"}, func(Result) {
		results++
		if results == 1 {
			<-planning
			cancel()
		}
	}, nil)
	store.close()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ExtractSessions = %v, want it stopped by its cancelled context", err)
	}
	if late := store.lateReads(); len(late) > 0 {
		t.Errorf("reads of the store after ExtractSessions returned: %v", late)
	}
	if results == 0 {
		t.Fatal("no window of the first session was committed; the test needs the commit to cancel in")
	}
}
