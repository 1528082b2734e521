// Package rivertest is the conformance suite of imprint's River engine
// (schedule.River) on a store's database, the way riverdrivertest runs
// River's own suite against each of its drivers: every store that hosts
// River (SQLite through riversqlite, PostgreSQL through riverpgxv5) runs
// it from its tests with a Backend that opens it.
package rivertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/schedule"
)

// Backend opens a store with a River engine installed as its job engine,
// as one process (a node) does.
type Backend[TTx any] struct {
	// Fresh returns where a new, empty database is (a file path, a URL):
	// each call another one.
	Fresh func(t *testing.T) string
	// Open opens the store at loc, builds a River engine on it with cfg
	// and installs it as the store's job engine; both are closed when
	// the test ends. On a database several nodes share, Open sets
	// cfg.Nodes to nodes(the store's leases) when nodes is not nil (the
	// store's leases otherwise); a store alone on its database ignores
	// nodes.
	Open func(t *testing.T, loc string, cfg schedule.RiverConfig, nodes func(schedule.Nodes) schedule.Nodes) (Store[TTx], *schedule.River[TTx])
	// Serial runs the cases one at a time (a database with one backend,
	// such as PGlite).
	Serial bool
	// Nodes says that several stores opened at one loc are nodes sharing
	// its database, each with a lease (PostgreSQL); false for a store
	// alone on its database (SQLite), whose engine hands every running
	// job back at its start instead.
	Nodes bool
}

// Store is a store that hosts River, with its write transactions.
type Store[TTx any] struct {
	imprint.ServiceStore
	// Begin starts a write transaction of the store, in which River's
	// InsertTx enqueues.
	Begin func(ctx context.Context) (TTx, error)
	// Commit and Rollback end it.
	Commit, Rollback func(ctx context.Context, tx TTx) error
}

func (b Backend[TTx]) open(t *testing.T, loc string, cfg schedule.Config, nodes func(schedule.Nodes) schedule.Nodes) (Store[TTx], *schedule.River[TTx]) {
	t.Helper()
	return b.Open(t, loc, schedule.RiverConfig{Config: cfg}, nodes)
}

func (b Backend[TTx]) openNew(t *testing.T, cfg schedule.Config) (Store[TTx], *schedule.River[TTx]) {
	t.Helper()
	return b.open(t, b.Fresh(t), cfg, nil)
}

// Run runs the suite against b.
func Run[TTx any](t *testing.T, b Backend[TTx]) {
	cases := []struct {
		name string
		fn   func(*testing.T, Backend[TTx])
	}{
		{"EnqueueFollowsTheTransaction", testEnqueueFollowsTheTransaction[TTx]},
		{"UniqueKey", testUniqueKey[TTx]},
		{"RetriesThenFails", testRetriesThenFails[TTx]},
		{"ShutdownHandsBack", testShutdownHandsBack[TTx]},
		{"RecoversJobOfCrashedProcess", testRecoversJobOfCrashedProcess[TTx]},
		{"LiveNodeKeepsLongJob", testLiveNodeKeepsLongJob[TTx]},
		{"OneExtractionPerSession", testOneExtractionPerSession[TTx]},
		{"UniqueKeyAfterRollback", testUniqueKeyAfterRollback[TTx]},
		{"DoneWhenHandlerReturns", testDoneWhenHandlerReturns[TTx]},
		{"ExtractionsFirst", testExtractionsFirst[TTx]},
		{"ListedBeforeTheJobEnded", testListedBeforeTheJobEnded[TTx]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !b.Serial {
				t.Parallel()
			}
			c.fn(t, b)
		})
	}
}

var scope = imprint.Scope{Tenant: "acme", User: "alice", Agent: "claude"}

// fastConfig retries at once so tests do not wait on backoff.
func fastConfig() schedule.Config {
	return schedule.Config{Workers: 2, PollInterval: 5 * time.Millisecond, BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
		ShutdownGrace: 5 * time.Second}
}

type event struct {
	name string
	job  imprint.Job
	err  error
}

// runRiver runs e until the returned stop is called (or the test ends)
// and returns its events.
func runRiver[TTx any](t *testing.T, e *schedule.River[TTx]) (<-chan event, func() error) {
	t.Helper()
	events := make(chan event, 100)
	e.OnEvent(func(name string, j imprint.Job, err error) { events <- event{name, j, err} })
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- e.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-res:
			case <-time.After(30 * time.Second):
				runErr = errors.New("Run did not return after cancel")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return events, stop
}

func waitEvent(t *testing.T, events <-chan event, name string) event {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.name == name {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event within 20s", name)
			return event{}
		}
	}
}

// waitStarted waits for a handler to report that it started job id.
func waitStarted(t *testing.T, started <-chan imprint.Job, id int64) {
	t.Helper()
	select {
	case j := <-started:
		if j.ID != id {
			t.Fatalf("ran job %d, want %d", j.ID, id)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("job %d did not start within 20s", id)
	}
}

func jobStats(t *testing.T, db imprint.ServiceStore) imprint.JobStats {
	t.Helper()
	st, err := db.JobStats(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// crashingNodes renews the node's lease until dead is set, as a process
// that was killed stops renewing it.
type crashingNodes struct {
	schedule.Nodes
	dead *atomic.Bool
}

func (c crashingNodes) RenewLease(ctx context.Context, id string) error {
	if c.dead.Load() {
		return nil
	}
	return c.Nodes.RenewLease(ctx, id)
}

func testEnqueueFollowsTheTransaction[TTx any](t *testing.T, b Backend[TTx]) {
	db, e := b.openNew(t, fastConfig())
	ctx := t.Context()
	for _, commit := range []bool{false, true} {
		tx, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.InsertTx(ctx, tx, imprint.Job{Kind: imprint.JobCapture, Scope: scope, EpisodeID: "ep-1"}); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = db.Commit(ctx, tx)
		} else {
			err = db.Rollback(ctx, tx)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if commit {
			want = 1
		}
		if got := jobStats(t, db).Available; got != want {
			t.Errorf("after commit=%v: %d available jobs, want %d", commit, got, want)
		}
	}
	// The store's own transactions: closing an episode enqueues its capture.
	if _, err := db.AppendTurns(ctx, scope, "s1", []imprint.Turn{{Role: imprint.RoleUser, Content: "hi", TS: imprint.Now()}}, "ep-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CloseEpisode(ctx, scope, "ep-2", imprint.ClosedFinalized, &imprint.Job{Kind: imprint.JobCapture}); err != nil {
		t.Fatal(err)
	}
	jobs, err := db.ListJobs(ctx, &scope, imprint.JobAvailable, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, string(j.Kind)+" "+j.EpisodeID+" "+j.SessionID)
	}
	if d := cmp.Diff([]string{"capture ep-2 s1", "capture ep-1 "}, got); d != "" {
		t.Errorf("available jobs (-want +got):\n%s", d)
	}
	// A job of an unknown kind fails the enqueue and the episode stays open.
	if _, err := db.AppendTurns(ctx, scope, "s2", []imprint.Turn{{Role: imprint.RoleUser, Content: "hi", TS: imprint.Now()}}, "ep-3"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CloseEpisode(ctx, scope, "ep-3", imprint.ClosedFinalized, &imprint.Job{Kind: "bogus"}); !errors.Is(err, imprint.ErrInvalid) {
		t.Errorf("CloseEpisode with a bogus job: err %v, want ErrInvalid", err)
	}
	if _, err := db.OpenEpisode(ctx, scope, "s2"); err != nil {
		t.Errorf("episode closed although its job failed: %v", err)
	}
}

func testUniqueKey[TTx any](t *testing.T, b Backend[TTx]) {
	db, e := b.openNew(t, fastConfig())
	ctx := t.Context()
	first, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != second.ID || first.UniqueKey != imprint.ExtractJobKey(scope, "s1") {
		t.Errorf("second enqueue of the session's extraction: job %d key %q, want job %d key %q", second.ID, second.UniqueKey, first.ID, imprint.ExtractJobKey(scope, "s1"))
	}
	if _, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s2"}); err != nil {
		t.Fatal(err)
	}
	if got := jobStats(t, db).Available; got != 2 {
		t.Errorf("%d available jobs, want 2 (one per session)", got)
	}
	// Once the job is done the key is free again.
	e.Handle(imprint.JobExtract, func(context.Context, imprint.Job) error { return nil })
	events, stop := runRiver(t, e)
	waitEvent(t, events, schedule.EventDone)
	waitEvent(t, events, schedule.EventDone)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	third, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if third.ID == first.ID {
		t.Errorf("enqueue after the job completed returned the completed job %d", first.ID)
	}
}

func testRetriesThenFails[TTx any](t *testing.T, b Backend[TTx]) {
	db, e := b.openNew(t, fastConfig())
	ctx := t.Context()
	var mu sync.Mutex
	calls := 0
	e.Handle(imprint.JobEmbed, func(context.Context, imprint.Job) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return errors.New("embedder down")
	})
	if _, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobEmbed, Scope: scope, MaxAttempts: 3}); err != nil {
		t.Fatal(err)
	}
	events, stop := runRiver(t, e)
	waitEvent(t, events, schedule.EventRetry)
	ev := waitEvent(t, events, schedule.EventFailed)
	if ev.job.Attempts != 3 || ev.job.LastError != "embedder down" {
		t.Errorf("failed event: attempts %d error %q, want 3 and %q", ev.job.Attempts, ev.job.LastError, "embedder down")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	failed, err := db.ListJobs(ctx, &scope, imprint.JobFailed, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0].LastError != "embedder down" || failed[0].Attempts != 3 || failed[0].Kind != imprint.JobEmbed {
		t.Fatalf("failed jobs = %+v, want the embed job with 3 attempts and its last error", failed)
	}
	if st := jobStats(t, db); st != (imprint.JobStats{Failed: 1}) {
		t.Errorf("stats = %+v, want one failed job", st)
	}
	other := imprint.Scope{Tenant: "acme", User: "bob", Agent: "claude"}
	if jobs, err := db.ListJobs(ctx, &other, imprint.JobFailed, 10); err != nil || len(jobs) != 0 {
		t.Errorf("failed jobs of another scope = %v, %v; want none", jobs, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 3 {
		t.Errorf("handler ran %d times, want 3", calls)
	}
}

func testShutdownHandsBack[TTx any](t *testing.T, b Backend[TTx]) {
	loc := b.Fresh(t)
	cfg := fastConfig()
	cfg.ShutdownGrace = 50 * time.Millisecond
	db, e := b.open(t, loc, cfg, nil)
	ctx := t.Context()
	started := make(chan struct{}, 1)
	e.Handle(imprint.JobCapture, func(ctx context.Context, _ imprint.Job) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	job, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobCapture, Scope: scope, EpisodeID: "ep-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := runRiver(t, e)
	<-started
	if err := stop(); err != nil {
		t.Fatalf("Run after shutdown: %v", err)
	}
	jobs, err := db.ListJobs(ctx, nil, imprint.JobAvailable, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].ID != job.ID || jobs[0].Attempts != 0 || jobs[0].LastError != "" {
		t.Fatalf("available jobs after shutdown = %+v, want job %d handed back with no attempt counted", jobs, job.ID)
	}
	// The next start runs it.
	_, e2 := b.open(t, loc, fastConfig(), nil)
	e2.Handle(imprint.JobCapture, func(context.Context, imprint.Job) error { return nil })
	events, _ := runRiver(t, e2)
	if ev := waitEvent(t, events, schedule.EventDone); ev.job.ID != job.ID {
		t.Errorf("next start completed job %d, want %d", ev.job.ID, job.ID)
	}
}

// testRecoversJobOfCrashedProcess: a process stops (its handler hangs
// and, on a database shared by nodes, its lease is no longer renewed, as
// after kill -9) while running a job; the next process on the database
// runs that job: at its start when it is alone on the database, after the
// crashed node's lease lapsed when nodes share it.
func testRecoversJobOfCrashedProcess[TTx any](t *testing.T, b Backend[TTx]) {
	loc := b.Fresh(t)
	cfg := fastConfig()
	cfg.Workers = 1
	cfg.ShutdownGrace = 50 * time.Millisecond
	rc := schedule.RiverConfig{Config: cfg, LeaseTTL: time.Second}
	// The "crashed" process: its handler never returns while the second
	// process starts on the same database.
	var dead atomic.Bool
	_, crashed := b.Open(t, loc, rc, func(n schedule.Nodes) schedule.Nodes { return crashingNodes{n, &dead} })
	started := make(chan imprint.Job, 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	crashed.Handle(imprint.JobExtract, func(ctx context.Context, j imprint.Job) error {
		started <- j
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	})
	job, err := crashed.Enqueue(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	runRiver(t, crashed)
	if j := <-started; j.ID != job.ID {
		t.Fatalf("crashed process ran job %d, want %d", j.ID, job.ID)
	}
	dead.Store(true)

	db2, restarted := b.Open(t, loc, rc, nil)
	if st := jobStats(t, db2); st.Running != 1 {
		t.Fatalf("stats before restart = %+v, want the job running", st)
	}
	restarted.Handle(imprint.JobExtract, func(context.Context, imprint.Job) error { return nil })
	events, _ := runRiver(t, restarted)
	ev := waitEvent(t, events, schedule.EventDone)
	if ev.job.ID != job.ID || ev.job.SessionID != "s1" {
		t.Errorf("restart completed job %d of session %q, want job %d of s1", ev.job.ID, ev.job.SessionID, job.ID)
	}
}

// testLiveNodeKeepsLongJob: on a database nodes share, a live node's job
// that runs longer than the lease (three leases here) is never taken by
// another node running meanwhile: the live node renews its lease, so
// only a crashed node's jobs are handed back, and the job completes once,
// on the node that started it.
func testLiveNodeKeepsLongJob[TTx any](t *testing.T, b Backend[TTx]) {
	if !b.Nodes {
		t.Skip("the store is alone on its database: there are no leases, and a second store opened on it " +
			"hands every running job back at its start (it takes the first store for a crashed process)")
	}
	loc := b.Fresh(t)
	cfg := fastConfig()
	cfg.Workers = 1
	const ttl = time.Second
	rc := schedule.RiverConfig{Config: cfg, LeaseTTL: ttl}
	_, a := b.Open(t, loc, rc, nil)
	started := make(chan imprint.Job, 4)
	release := make(chan struct{})
	a.Handle(imprint.JobExtract, func(_ context.Context, j imprint.Job) error {
		started <- j
		<-release
		return nil
	})
	job, err := a.Enqueue(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	eventsA, stopA := runRiver(t, a)
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	waitStarted(t, started, job.ID)

	db, nodeB := b.Open(t, loc, rc, nil)
	ranOnB := make(chan imprint.Job, 4)
	nodeB.Handle(imprint.JobExtract, func(_ context.Context, j imprint.Job) error {
		ranOnB <- j
		return nil
	})
	_, stopB := runRiver(t, nodeB)
	// Node B runs for three leases while A's handler holds the job.
	select {
	case j := <-ranOnB:
		t.Fatalf("node B ran job %d while node A, alive, was still running it", j.ID)
	case j := <-started:
		t.Fatalf("node A started job %d again while running it", j.ID)
	case <-time.After(3 * ttl):
	}
	if st := jobStats(t, db); st.Running != 1 || st.Available+st.Retryable != 0 {
		t.Errorf("stats after three leases = %+v, want the job still running on A", st)
	}
	released = true
	close(release)
	if ev := waitEvent(t, eventsA, schedule.EventDone); ev.job.ID != job.ID {
		t.Errorf("node A completed job %d, want %d", ev.job.ID, job.ID)
	}
	if err := stopA(); err != nil {
		t.Fatal(err)
	}
	if err := stopB(); err != nil {
		t.Fatal(err)
	}
	select {
	case j := <-ranOnB:
		t.Errorf("node B ran job %d", j.ID)
	case j := <-started:
		t.Errorf("node A ran job %d a second time", j.ID)
	default:
	}
	if st := jobStats(t, db); st != (imprint.JobStats{}) {
		t.Errorf("stats at the end = %+v, want no job left", st)
	}
}

// testOneExtractionPerSession is the Scheduler's TestOneExtractionPerSession
// on the River engine: enqueueing a session's extraction while one is running
// returns the running job and queues nothing, and extraction jobs of one
// session queued under other keys (as an older process may have left
// them) never run side by side, while another session's run alongside.
func testOneExtractionPerSession[TTx any](t *testing.T, b Backend[TTx]) {
	cfg := fastConfig()
	cfg.Workers = 4
	db, e := b.openNew(t, cfg)
	ctx := t.Context()
	var mu sync.Mutex
	inFlight := map[string]int{}
	maxInFlight := map[string]int{}
	runs := map[string]int{}
	started := make(chan imprint.Job, 20)
	release := make(chan struct{})
	e.Handle(imprint.JobExtract, func(ctx context.Context, j imprint.Job) error {
		mu.Lock()
		inFlight[j.SessionID]++
		runs[j.SessionID]++
		maxInFlight[j.SessionID] = max(maxInFlight[j.SessionID], inFlight[j.SessionID])
		mu.Unlock()
		started <- j
		if j.SessionID == "held" {
			<-release
		} else {
			time.Sleep(20 * time.Millisecond) // overlap with other workers
		}
		mu.Lock()
		inFlight[j.SessionID]--
		mu.Unlock()
		return nil
	})
	events, stop := runRiver(t, e)

	// 1. A running extraction absorbs the next enqueue of its session.
	held, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "held"})
	if err != nil {
		t.Fatal(err)
	}
	waitStarted(t, started, held.ID)
	again, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "held"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != held.ID || again.State != imprint.JobRunning {
		t.Errorf("enqueue while the session's extraction runs: job %d (%s), want the running job %d", again.ID, again.State, held.ID)
	}
	if st := jobStats(t, db); st.Running != 1 || st.Available+st.Retryable != 0 {
		t.Errorf("stats while one extraction runs = %+v, want it alone", st)
	}
	close(release)
	if ev := waitEvent(t, events, schedule.EventDone); ev.job.ID != held.ID {
		t.Fatalf("done job %d, want %d", ev.job.ID, held.ID)
	}

	// 2. Jobs queued under other keys still run one at a time per session.
	total := 0
	for i := range 3 {
		for _, sess := range []string{"s1", "s2"} {
			if _, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: sess,
				UniqueKey: fmt.Sprintf("batch-%s-%d", sess, i)}); err != nil {
				t.Fatal(err)
			}
			total++
		}
	}
	for range total {
		if ev := waitEvent(t, events, schedule.EventDone); ev.job.SessionID == "held" {
			t.Errorf("the held session's extraction ran again")
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, sess := range []string{"held", "s1", "s2"} {
		if maxInFlight[sess] != 1 {
			t.Errorf("session %s had %d extractions in flight at once, want 1", sess, maxInFlight[sess])
		}
	}
	if want := map[string]int{"held": 1, "s1": 3, "s2": 3}; !cmp.Equal(runs, want) {
		t.Errorf("extractions run per session = %v, want %v", runs, want)
	}
}

// testUniqueKeyAfterRollback checks that a key whose job was inserted
// in a transaction that rolled back is free again, even when another job
// took the rolled-back job's id.
func testUniqueKeyAfterRollback[TTx any](t *testing.T, b Backend[TTx]) {
	db, e := b.openNew(t, fastConfig())
	ctx := t.Context()
	key := imprint.ExtractJobKey(scope, "s1")
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gone, inserted, err := e.InsertTx(ctx, tx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1", UniqueKey: key})
	if err != nil || !inserted {
		t.Fatalf("insert in the rolled-back transaction: inserted %v, %v", inserted, err)
	}
	if err := db.Rollback(ctx, tx); err != nil {
		t.Fatal(err)
	}
	other, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobEmbed, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	j, inserted, err := db.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1", UniqueKey: key})
	if err != nil {
		t.Fatal(err)
	}
	if !inserted || j.Kind != imprint.JobExtract || j.ID == other.ID {
		t.Errorf("enqueue after the rollback of job %d: job %d (%s), inserted %v; want a new extract job (the embed job is %d)", gone.ID, j.ID, j.Kind, inserted, other.ID)
	}
	again, inserted, err := db.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1", UniqueKey: key})
	if err != nil || inserted || again.ID != j.ID {
		t.Errorf("second enqueue: job %d inserted %v (%v), want job %d held", again.ID, inserted, err, j.ID)
	}
	if st := jobStats(t, db); st.Available != 2 {
		t.Errorf("stats = %+v, want 2 available (the embed and one extract job)", st)
	}
}

// testDoneWhenHandlerReturns checks that a job is recorded completed as
// soon as its handler returns: a drain waiting on the job stats sees it
// done, and the session's next extraction, enqueued right then (as for
// messages that arrived while the job ran), is a new job rather than the
// ended one. The listeners run after the handler and before River's own
// completer records the outcome.
func testDoneWhenHandlerReturns[TTx any](t *testing.T, b Backend[TTx]) {
	db, e := b.openNew(t, fastConfig())
	ctx := t.Context()
	e.Handle(imprint.JobExtract, func(context.Context, imprint.Job) error { return nil })
	type seen struct {
		stats imprint.JobStats
		done  []imprint.Job
		next  imprint.Job
		err   error
	}
	seenc := make(chan seen, 1)
	e.OnEvent(func(name string, j imprint.Job, _ error) {
		if name != schedule.EventDone || j.SessionID != "s1" {
			return
		}
		st, err := db.JobStats(ctx, nil)
		if err != nil {
			seenc <- seen{err: err}
			return
		}
		done, err := db.ListJobs(ctx, &scope, imprint.JobCompleted, 10)
		if err != nil {
			seenc <- seen{err: err}
			return
		}
		next, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
		seenc <- seen{stats: st, done: done, next: next, err: err}
	})
	first, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := runRiver(t, e)
	var got seen
	select {
	case got = <-seenc:
	case <-time.After(20 * time.Second):
		t.Fatal("the extraction did not finish within 20s")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.stats != (imprint.JobStats{}) || len(got.done) != 1 || got.done[0].ID != first.ID {
		t.Errorf("right after the handler returned: stats %+v, completed jobs %+v; want no job left and job %d completed", got.stats, got.done, first.ID)
	}
	if got.next.ID == first.ID || got.next.State != imprint.JobAvailable {
		t.Errorf("the session's extraction enqueued right after its job ended: job %d (%s), want a new available job (the ended one is %d)",
			got.next.ID, got.next.State, first.ID)
	}
}

// testExtractionsFirst checks that with a backlog an extraction (a chain
// of LLM calls) runs before captures queued earlier, so that a burst of
// work does not end on one long chain.
func testExtractionsFirst[TTx any](t *testing.T, b Backend[TTx]) {
	cfg := fastConfig()
	cfg.Workers = 1
	_, e := b.openNew(t, cfg)
	ctx := t.Context()
	var mu sync.Mutex
	var order []string
	record := func(_ context.Context, j imprint.Job) error {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, string(j.Kind)+" "+j.EpisodeID+j.SessionID)
		return nil
	}
	e.Handle(imprint.JobCapture, record)
	e.Handle(imprint.JobExtract, record)
	for _, j := range []imprint.Job{
		{Kind: imprint.JobCapture, Scope: scope, EpisodeID: "ep-1"},
		{Kind: imprint.JobCapture, Scope: scope, EpisodeID: "ep-2"},
		{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"},
	} {
		if _, err := e.Enqueue(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	events, stop := runRiver(t, e)
	for range 3 {
		waitEvent(t, events, schedule.EventDone)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff([]string{"extract s1", "capture ep-1", "capture ep-2"}, order); d != "" {
		t.Errorf("order the jobs ran in (-want +got):\n%s", d)
	}
}

// testListedBeforeTheJobEnded checks that the planner's enqueue of a
// session it listed as pending before the session's extraction job ended
// adds no job (the listing predates the job's work), while one listed
// after it does.
func testListedBeforeTheJobEnded[TTx any](t *testing.T, b Backend[TTx]) {
	db, e := b.openNew(t, fastConfig())
	ctx := t.Context()
	e.Handle(imprint.JobExtract, func(context.Context, imprint.Job) error { return nil })
	j := imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"}
	first, err := e.Enqueue(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	listed := time.Now()
	events, stop := runRiver(t, e)
	waitEvent(t, events, schedule.EventDone)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	got, err := e.EnqueueListed(ctx, j, listed)
	if err != nil {
		t.Fatal(err)
	}
	if st := jobStats(t, db); got.ID != first.ID || st != (imprint.JobStats{}) {
		t.Errorf("enqueue of a session listed before its extraction ended: job %d, stats %+v; want the ended job %d and no new job", got.ID, st, first.ID)
	}
	time.Sleep(10 * time.Millisecond)
	got, err = e.EnqueueListed(ctx, j, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got.ID == first.ID || got.State != imprint.JobAvailable || jobStats(t, db).Available != 1 {
		t.Errorf("enqueue of a session listed after its extraction ended: job %d (%s), want a new available job", got.ID, got.State)
	}
}
