package record

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/internal/pgtest"
	"github.com/imprint-dev/imprint/postgres"
	"github.com/imprint-dev/imprint/shard"
)

// The recorder's lanes on a real PostgreSQL store (ConcurrentWriter).

type pgFixture struct {
	rec   *Recorder
	db    *postgres.DB
	shard string
}

// countingPG notes how many AppendMessageBatches calls overlapped, and
// runs hook (when set) as each call starts.
type countingPG struct {
	*postgres.DB
	inFlight, most atomic.Int32
	calls          atomic.Int32
	hook           func(n int32)
}

func (s *countingPG) AppendMessageBatches(ctx context.Context, b []imprint.MessageBatch) ([]imprint.AppendResult, error) {
	n := s.calls.Add(1)
	cur := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.most.Load()
		if cur <= m || s.most.CompareAndSwap(m, cur) {
			break
		}
	}
	if s.hook != nil {
		s.hook(n)
	}
	return s.DB.AppendMessageBatches(ctx, b)
}

func newPGFixture(t *testing.T, cfg Config, wrap func(*postgres.DB) imprint.Store) pgFixture {
	t.Helper()
	db, err := postgres.Open(context.Background(), pgtest.Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	sdir := filepath.Join(t.TempDir(), "conversations")
	w, err := shard.NewWriter(sdir)
	if err != nil {
		t.Fatal(err)
	}
	var store imprint.Store = db
	if wrap != nil {
		store = wrap(db)
	}
	r := NewRecorder(Deps{Store: store, Embedder: embedding.NewHash(), Conversations: w}, cfg)
	r.now = func() time.Time { return testNow }
	return pgFixture{rec: r, db: db, shard: sdir}
}

func pgShardLines(t *testing.T, dir string) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := shard.Read(dir, func(line []byte) error {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func pgView(t *testing.T, db *postgres.DB, s string) []string {
	t.Helper()
	ms, err := db.PendingMessages(context.Background(), scope, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprint(m.ID, " ", m.Role, " ", m.Content, " ", m.Timestamp))
	}
	return out
}

// pgLaneSessions: eight sessions of 60 messages, s0 and s3 given twice
// (their second calls repeating ids), s5 between people.
func pgLaneSessions() []Session {
	var out []Session
	for k := range 8 {
		var ms []imprint.Message
		for i := range 60 {
			m := user(fmt.Sprintf("m%d", i), fmt.Sprintf("session %d says %d", k, i))
			if i%3 == 1 {
				m = assistant(fmt.Sprintf("m%d", i), fmt.Sprintf("session %d answers %d", k, i))
			}
			ms = append(ms, m)
		}
		out = append(out, Session{SessionID: fmt.Sprintf("s%d", k), Messages: ms, BetweenPeople: k == 5})
	}
	for _, k := range []int{0, 3} {
		out = append(out, Session{SessionID: fmt.Sprintf("s%d", k), Messages: []imprint.Message{
			user("m59", "repeat"), user("m60", fmt.Sprintf("session %d goes on", k)), user("m59", "again")}})
	}
	return out
}

// TestPostgresLanesLikeOneByOne records a group in two lanes on a real
// PostgreSQL store and checks results, messages, session state and shard
// lines against recording the calls one by one.
func TestPostgresLanesLikeOneByOne(t *testing.T) {
	cfg := Config{EveryNRounds: 7}
	sessions := pgLaneSessions()
	seq := newPGFixture(t, cfg, nil)
	var want []Result
	for _, s := range sessions {
		res, err := seq.rec.RecordSession(context.Background(), scope, s)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res)
	}
	var cs *countingPG
	f := newPGFixture(t, cfg, func(db *postgres.DB) imprint.Store { cs = &countingPG{DB: db}; return cs })
	if _, ok := imprint.AsConcurrentWriter(f.db); !ok {
		t.Fatal("the PostgreSQL store does not say its writes run at once")
	}
	for round := range 3 { // again: every id a duplicate the second time
		got, err := f.rec.RecordMany(context.Background(), scope, sessions)
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("results (-one by one +lanes):\n%s", diff)
			}
		}
	}
	if cs.most.Load() < 2 {
		t.Errorf("at most %d appends at once, want the two lanes together", cs.most.Load())
	}
	for k := range 8 {
		s := fmt.Sprintf("s%d", k)
		if diff := cmp.Diff(pgView(t, seq.db, s), pgView(t, f.db, s)); diff != "" {
			t.Errorf("session %s messages (-one by one +lanes):\n%s", s, diff)
		}
		a, _ := seq.db.GetSession(context.Background(), scope, s)
		b, _ := f.db.GetSession(context.Background(), scope, s)
		if a.BetweenPeople != b.BetweenPeople || a.ExtractionDue != b.ExtractionDue || a.RoundsSinceExtraction != b.RoundsSinceExtraction {
			t.Errorf("session %s: one by one %+v, lanes %+v", s, a, b)
		}
	}
	if diff := cmp.Diff(pgShardLines(t, seq.shard), pgShardLines(t, f.shard)); diff != "" {
		t.Errorf("shard lines (-one by one +lanes):\n%s", diff)
	}
}

// The context ends while the two lanes are in flight: RecordMany returns
// (no hang), with the context's error, every call failed or stored, shard
// lines only of stored messages, and no goroutine left behind.
func TestPostgresLanesCancelledMidGroup(t *testing.T) {
	for attempt := range 5 {
		t.Run(fmt.Sprint(attempt), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var once sync.Once
			f := newPGFixture(t, Config{}, func(db *postgres.DB) imprint.Store {
				return &countingPG{DB: db, hook: func(n int32) {
					if n == 2 {
						once.Do(func() { time.AfterFunc(time.Duration(attempt)*time.Millisecond, cancel) })
					}
				}}
			})
			before := runtime.NumGoroutine()
			done := make(chan struct{})
			var res []Result
			var err error
			go func() {
				defer close(done)
				res, err = f.rec.RecordMany(ctx, scope, pgLaneSessions())
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("RecordMany did not return after its context was cancelled")
			}
			stored := 0
			for i, s := range pgLaneSessions()[:8] {
				n := len(pgView(t, f.db, s.SessionID))
				if n != 0 && n < len(res[i].MessageIDs) {
					t.Errorf("session %s: %d stored, result says %d", s.SessionID, n, len(res[i].MessageIDs))
				}
				stored += n
			}
			if lines := len(pgShardLines(t, f.shard)); lines != stored {
				t.Errorf("%d shard lines for %d stored messages", lines, stored)
			}
			t.Logf("err %v, %d stored", err, stored)
			time.Sleep(50 * time.Millisecond)
			if after := runtime.NumGoroutine(); after > before+2 {
				t.Errorf("%d goroutines before, %d after", before, after)
			}
		})
	}
}
