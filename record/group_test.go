package record

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/shard"
	"github.com/imprint-dev/imprint/sqlite"
)

// plainStore hides the sqlite store's AppendMessageBatches, so the
// recorder takes its one-append-per-call path.
type plainStore struct{ imprint.Store }

// gateStore holds its first AppendMessageBatches until gate is closed and
// notes how many batches each call carried.
type gateStore struct {
	*sqlite.DB
	entered, gate chan struct{}
	once          sync.Once
	mu            sync.Mutex
	sizes         []int
}

func newGateStore(db *sqlite.DB) *gateStore {
	return &gateStore{DB: db, entered: make(chan struct{}), gate: make(chan struct{})}
}

func (s *gateStore) AppendMessageBatches(ctx context.Context, b []imprint.MessageBatch) ([]imprint.AppendResult, error) {
	first := false
	s.once.Do(func() { first = true })
	if first {
		close(s.entered)
		<-s.gate
	}
	s.mu.Lock()
	s.sizes = append(s.sizes, len(b))
	s.mu.Unlock()
	return s.DB.AppendMessageBatches(ctx, b)
}

// withStore replaces the fixture's recorder by one over store (built on the
// fixture's database) and its shard folder.
func withStore(t *testing.T, f fixture, store imprint.Store, cfg Config) fixture {
	t.Helper()
	w, err := shard.NewWriter(f.shard)
	if err != nil {
		t.Fatal(err)
	}
	f.rec = NewRecorder(Deps{Store: store, Embedder: embedding.NewHash(), Conversations: w}, cfg)
	f.rec.now = func() time.Time { return testNow }
	return f
}

// waitQueued waits until n calls are queued behind the commit in flight.
func waitQueued(t *testing.T, r *Recorder, n int) {
	t.Helper()
	for r.group.queued() < n {
		runtime.Gosched()
	}
}

// TestRecordGroupLikeSequential queues calls with overlapping ids behind a
// held commit and expects them committed in one transaction, each with the
// result it gets when the calls run one after another, and a call whose
// context ended while queued to fail alone.
func TestRecordGroupLikeSequential(t *testing.T) {
	t.Parallel()
	calls := []struct {
		session string
		msgs    []imprint.Message
	}{
		{"s1", []imprint.Message{user("m1", "first"), assistant("m2", "second")}},
		{"s1", []imprint.Message{user("m2", "second again"), user("m3", "third"), user("m3", "third")}},
		{"s2", []imprint.Message{user("m1", "other session"), user("m4", "")}},
		{"s1", []imprint.Message{user("m1", "first"), user("m3", "third"), user("m5", "fifth")}},
	}
	cfg := Config{EveryNRounds: 3}

	// One after another.
	sessions := make([]Session, len(calls))
	for i, c := range calls {
		sessions[i] = Session{SessionID: c.session, Messages: c.msgs}
	}
	_, want := recordOneByOne(t, cfg, sessions)

	f := newFixture(t, Deps{}, cfg)
	gs := newGateStore(f.db)
	f = withStore(t, f, gs, cfg)
	got := make([]Result, len(calls))
	errs := make([]error, len(calls)+1)
	var wg sync.WaitGroup
	wg.Go(func() { got[0], errs[0] = f.rec.Record(context.Background(), scope, calls[0].session, calls[0].msgs) })
	<-gs.entered
	// A call whose context ends while it waits, queued first.
	cancelled, cancel := context.WithCancel(context.Background())
	wg.Go(func() {
		_, errs[len(calls)] = f.rec.Record(cancelled, scope, "s1", []imprint.Message{user("m9", "never stored")})
	})
	waitQueued(t, f.rec, 1)
	cancel()
	for i := 1; i < len(calls); i++ {
		wg.Go(func() { got[i], errs[i] = f.rec.Record(context.Background(), scope, calls[i].session, calls[i].msgs) })
		waitQueued(t, f.rec, i+1)
	}
	close(gs.gate)
	wg.Wait()

	for i, err := range errs[:len(calls)] {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if !errors.Is(errs[len(calls)], context.Canceled) {
		t.Errorf("cancelled call: error %v, want context.Canceled", errs[len(calls)])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("grouped results differ from one-after-another (-sequential +grouped):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, len(calls) - 1}, gs.sizes); diff != "" {
		t.Errorf("batches per store transaction (-want +got):\n%s", diff)
	}
	if _, err := f.db.GetMessage(context.Background(), scope, "s1", "m9"); !errors.Is(err, imprint.ErrNotFound) {
		t.Errorf("the cancelled call's message was stored (err %v)", err)
	}
	var lines []string
	for _, l := range f.shardLines(t) {
		lines = append(lines, fmt.Sprint(l["session_id"], "/", l["id"]))
	}
	if diff := cmp.Diff([]string{"s1/m1", "s1/m2", "s1/m3", "s2/m1", "s1/m5"}, lines); diff != "" {
		t.Errorf("shard lines (-want +got):\n%s", diff)
	}
}

// TestRecordConcurrentOverlapping posts overlapping ids from many
// goroutines to a few sessions and expects every message recorded exactly
// once, in the store, in the results and in the shard, with and without a
// batch-appending store.
func TestRecordConcurrentOverlapping(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		store func(*sqlite.DB) imprint.Store
	}{
		{"batch store", func(db *sqlite.DB) imprint.Store { return db }},
		{"plain store", func(db *sqlite.DB) imprint.Store { return plainStore{db} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{EveryNRounds: 4}
			f := newFixture(t, Deps{}, cfg)
			f = withStore(t, f, tc.store(f.db), cfg)
			const workers, callsEach, sessions, idsPerSession = 12, 15, 3, 40
			type posted struct {
				session string
				ids     []string
				res     Result
			}
			out := make([][]posted, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for k := range callsEach {
						session := fmt.Sprintf("s%d", (w+k)%sessions)
						var msgs []imprint.Message
						var ids []string
						for j := range 5 {
							// Overlapping windows of the session's ids, one
							// repeated within the call.
							id := fmt.Sprintf("m%02d", (w*3+k*2+j*j)%idsPerSession)
							role := imprint.RoleUser
							if j%2 == 1 {
								role = imprint.RoleAssistant
							}
							msgs = append(msgs, imprint.Message{ID: id, Role: role, Content: "text of " + session + " " + id})
							ids = append(ids, id)
						}
						res, err := f.rec.Record(context.Background(), scope, session, msgs)
						if err != nil {
							t.Errorf("worker %d call %d: %v", w, k, err)
							return
						}
						out[w] = append(out[w], posted{session, ids, res})
					}
				})
			}
			wg.Wait()

			recorded := map[string]int{} // session/id -> times reported recorded
			postedIDs := map[string]bool{}
			notified := map[string]bool{}
			for _, ps := range out {
				for _, p := range ps {
					var seen []string
					for _, id := range p.res.MessageIDs {
						recorded[p.session+"/"+id]++
						seen = append(seen, id)
					}
					for _, s := range p.res.Skipped {
						if s.Reason != ReasonDuplicate {
							t.Errorf("%s: %s skipped as %q", p.session, s.ID, s.Reason)
						}
						seen = append(seen, s.ID)
					}
					sort.Strings(seen)
					want := append([]string(nil), p.ids...)
					sort.Strings(want)
					if diff := cmp.Diff(want, seen); diff != "" {
						t.Errorf("%s: result accounts for other ids than posted (-posted +recorded/skipped):\n%s", p.session, diff)
					}
					if p.res.RecordedCount != len(p.res.MessageIDs) || p.res.VectorsWritten != p.res.RecordedCount {
						t.Errorf("%s: counts %d recorded, %d vectors for %d ids", p.session, p.res.RecordedCount, p.res.VectorsWritten, len(p.res.MessageIDs))
					}
					for _, id := range p.ids {
						postedIDs[p.session+"/"+id] = true
					}
					notified[p.session] = notified[p.session] || p.res.SchedulerNotified
				}
			}
			for key := range postedIDs {
				if recorded[key] != 1 {
					t.Errorf("%s reported recorded %d times, want once", key, recorded[key])
				}
			}

			stored := map[string]int{}
			for s := range sessions {
				session := fmt.Sprintf("s%d", s)
				msgs, err := f.db.PendingMessages(context.Background(), scope, session, 0)
				if err != nil {
					t.Fatal(err)
				}
				users := 0
				for _, m := range msgs {
					stored[session+"/"+m.ID]++
					if m.Role == imprint.RoleUser {
						users++
					}
				}
				sess, err := f.db.GetSession(context.Background(), scope, session)
				if err != nil {
					t.Fatal(err)
				}
				if sess.RoundsSinceExtraction != users {
					t.Errorf("%s: %d rounds counted for %d user messages", session, sess.RoundsSinceExtraction, users)
				}
				if wantDue := users >= cfg.EveryNRounds; sess.ExtractionDue != wantDue || notified[session] != wantDue {
					t.Errorf("%s with %d user messages: due %v, notified %v, want %v", session, users, sess.ExtractionDue, notified[session], wantDue)
				}
			}
			shardLines := map[string]int{}
			for _, l := range f.shardLines(t) {
				shardLines[fmt.Sprint(l["session_id"], "/", l["id"])]++
			}
			if diff := cmp.Diff(recorded, stored); diff != "" {
				t.Errorf("stored messages differ from the recorded results (-results +store):\n%s", diff)
			}
			if diff := cmp.Diff(recorded, shardLines); diff != "" {
				t.Errorf("shard lines differ from the recorded results (-results +shard):\n%s", diff)
			}
		})
	}
}

func TestGrouperCapsAndOrdersGroups(t *testing.T) {
	t.Parallel()
	var g grouper
	release := make(chan struct{})
	var mu sync.Mutex
	var groups [][]string
	commit := func(group []*call) {
		mu.Lock()
		var names []string
		for _, c := range group {
			names = append(names, c.sessionID)
		}
		groups = append(groups, names)
		first := len(groups) == 1
		mu.Unlock()
		if first {
			<-release
		}
	}
	newCall := func(name string) *call { return &call{sessionID: name, wake: make(chan bool, 1)} }
	var wg sync.WaitGroup
	wg.Go(func() { g.do(newCall("lead"), commit) })
	for {
		mu.Lock()
		started := len(groups) == 1
		mu.Unlock()
		if started {
			break
		}
		runtime.Gosched()
	}
	n := maxGroup + 2
	var want []string
	for i := range n {
		name := fmt.Sprintf("c%02d", i)
		want = append(want, name)
		wg.Go(func() { g.do(newCall(name), commit) })
		for g.queued() < i+1 {
			runtime.Gosched()
		}
	}
	close(release)
	wg.Wait()
	if diff := cmp.Diff([][]string{{"lead"}, want[:maxGroup], want[maxGroup:]}, groups); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if g.busy || g.queued() != 0 {
		t.Errorf("grouper not idle after the last group: busy %v, %d queued", g.busy, g.queued())
	}
}
