package record

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/sqlite"
)

// laneStore is the sqlite store saying its writes run at once
// (imprint.ConcurrentWriter). It notes the sessions of each
// AppendMessageBatches call, holds each call until a second one is in
// flight (or a second has passed) to see whether they overlap, and fails
// the calls that carry session fail.
type laneStore struct {
	*sqlite.DB
	fail string

	mu       sync.Mutex
	calls    [][]string
	inFlight int
	overlap  bool
	arrived  chan struct{}
}

func newLaneStore(db *sqlite.DB) *laneStore {
	return &laneStore{DB: db, arrived: make(chan struct{}, 16)}
}

func (s *laneStore) SupportsConcurrentWrites() bool { return true }

func (s *laneStore) AppendMessageBatches(ctx context.Context, b []imprint.MessageBatch) ([]imprint.AppendResult, error) {
	var sessions []string
	for _, x := range b {
		sessions = append(sessions, x.SessionID)
	}
	s.mu.Lock()
	s.calls = append(s.calls, sessions)
	s.inFlight++
	if s.inFlight > 1 {
		s.overlap = true
	}
	s.mu.Unlock()
	s.arrived <- struct{}{}
	// Wait for a second call, or give up: a lone call must not hang.
	deadline := time.After(time.Second)
	for waiting := true; waiting; {
		s.mu.Lock()
		waiting = !s.overlap
		s.mu.Unlock()
		if !waiting {
			break
		}
		select {
		case <-s.arrived:
		case <-deadline:
			waiting = false
		}
	}
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if s.fail != "" && slices.Contains(sessions, s.fail) {
		return nil, fmt.Errorf("session %s: %w", s.fail, imprint.ErrUnavailable)
	}
	return s.DB.AppendMessageBatches(ctx, b)
}

// laneSessions are five sessions of 100 messages, the first given twice
// (its second call repeating some ids), as a chunk of an import.
func laneSessions() []Session {
	var out []Session
	for k := range 5 {
		var ms []imprint.Message
		for i := range 100 {
			ms = append(ms, user(fmt.Sprintf("m%d", i), fmt.Sprintf("session %d says %d", k, i)))
		}
		out = append(out, Session{SessionID: fmt.Sprintf("s%d", k), Messages: ms})
	}
	again := []imprint.Message{user("m99", "session 0 says 99"), user("m100", "session 0 goes on")}
	return append(out, Session{SessionID: "s0", Messages: again})
}

// On a store whose writes run at once, a large RecordMany is stored by
// two AppendMessageBatches calls made together, every session's calls in
// one of them, with the results, messages and shard lines of Record called
// once per session in order.
func TestRecordManyInLanes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := Config{EveryNRounds: 2}
	sessions := laneSessions()
	seq, want := recordOneByOne(t, cfg, sessions)

	f := newFixture(t, Deps{}, cfg)
	ls := newLaneStore(f.db)
	f = withStore(t, f, ls, cfg)
	got, err := f.rec.RecordMany(ctx, scope, sessions)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RecordMany results (-one by one +lanes):\n%s", diff)
	}
	if len(ls.calls) != 2 || !ls.overlap {
		t.Errorf("store calls %v (overlapping: %v), want two at once", ls.calls, ls.overlap)
	}
	lane := map[string]int{}
	for i, c := range ls.calls {
		for _, s := range c {
			if l, ok := lane[s]; ok && l != i {
				t.Errorf("session %s in calls %d and %d", s, l, i)
			}
			lane[s] = i
		}
	}
	sameStored(t, seq, f, "s0", "s1", "s2", "s3", "s4")
}

// A lane whose transaction fails is stored again call by call, so only the
// failing session's call fails; the other lane's sessions are stored.
func TestRecordManyLaneFailsAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, Deps{}, Config{})
	ls := newLaneStore(f.db)
	ls.fail = "s3"
	f = withStore(t, f, ls, Config{})
	sessions := laneSessions()
	res, err := f.rec.RecordMany(ctx, scope, sessions)
	if !errors.Is(err, imprint.ErrUnavailable) {
		t.Fatalf("RecordMany error %v, want the failing session's", err)
	}
	for i, s := range sessions {
		n, err := f.db.PendingMessages(ctx, scope, s.SessionID, 0)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case s.SessionID == "s3":
			if len(n) != 0 || len(res[i].MessageIDs) != 0 {
				t.Errorf("failing session: %d stored, result ids %v", len(n), res[i].MessageIDs)
			}
		case s.SessionID == "s0" && i == 0:
			if len(n) != 101 {
				t.Errorf("session s0: %d messages stored, want 101", len(n))
			}
		case s.SessionID != "s0" && len(n) != 100:
			t.Errorf("session %s: %d messages stored, want 100", s.SessionID, len(n))
		}
	}
	var lines int
	for _, l := range f.shardLines(t) {
		if l["session_id"] == "s3" {
			t.Errorf("shard line of the failing session: %v", l)
		}
		lines++
	}
	if lines != 401 {
		t.Errorf("%d shard lines, want 401 (the four stored sessions)", lines)
	}
}

// A group too small for two lanes of minLaneMessages is one call.
func TestSplitLanes(t *testing.T) {
	t.Parallel()
	mk := func(session string, n int) *call {
		return &call{scope: scope, sessionID: session, keep: make([]imprint.Message, n)}
	}
	small := []*call{mk("a", 100), mk("b", 100)}
	if got := splitLanes(small, 2, 128); len(got) != 1 || len(got[0]) != 2 {
		t.Errorf("200 messages: %d lanes, want 1", len(got))
	}
	calls := []*call{mk("a", 300), mk("b", 100), mk("a", 10), mk("c", 150), mk("d", 60)}
	got := splitLanes(calls, 2, 128)
	var sizes []int
	for _, l := range got {
		n := 0
		for _, c := range l {
			n += len(c.keep)
		}
		sizes = append(sizes, n)
	}
	// a (both its calls, in order) in one lane, b, c and d in the other.
	if len(got) != 2 || got[0][0] != calls[0] || got[0][1] != calls[2] || !slices.Equal(sizes, []int{310, 310}) {
		t.Errorf("lanes of sizes %v: %v", sizes, got)
	}
	if one := splitLanes(calls[:1], 2, 128); len(one) != 1 {
		t.Errorf("one call: %d lanes", len(one))
	}
}
