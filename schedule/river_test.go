package schedule

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/sqlite"
)

// openRiver opens a SQLite store at path with a River engine installed as
// its job engine.
func openRiver(t *testing.T, path string, cfg Config) (*sqlite.DB, *River[*sql.Tx]) {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	e, err := NewRiver(t.Context(), riversqlite.New(db.WriterDB()), db, RiverConfig{Config: cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetJobEngine(e); err != nil {
		t.Fatal(err)
	}
	return db, e
}

// runRiver runs e until the returned stop is called (or the test ends)
// and returns its events.
func runRiver(t *testing.T, e *River[*sql.Tx]) (<-chan event, func() error) {
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

func jobStats(t *testing.T, db *sqlite.DB) imprint.JobStats {
	t.Helper()
	st, err := db.JobStats(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestRiverEnqueueFollowsTheTransaction(t *testing.T) {
	t.Parallel()
	db, e := openRiver(t, filepath.Join(t.TempDir(), "imprint.db"), fastConfig())
	ctx := t.Context()
	for _, commit := range []bool{false, true} {
		tx, err := db.WriterDB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.InsertTx(ctx, tx, imprint.Job{Kind: imprint.JobCapture, Scope: scope, EpisodeID: "ep-1"}); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
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

func TestRiverUniqueKey(t *testing.T) {
	t.Parallel()
	db, e := openRiver(t, filepath.Join(t.TempDir(), "imprint.db"), fastConfig())
	ctx := t.Context()
	first, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != second.ID || first.UniqueKey != ExtractKey(scope, "s1") {
		t.Errorf("second enqueue of the session's extraction: job %d key %q, want job %d key %q", second.ID, second.UniqueKey, first.ID, ExtractKey(scope, "s1"))
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
	waitEvent(t, events, EventDone)
	waitEvent(t, events, EventDone)
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

func TestRiverRetriesThenFails(t *testing.T) {
	t.Parallel()
	db, e := openRiver(t, filepath.Join(t.TempDir(), "imprint.db"), fastConfig())
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
	waitEvent(t, events, EventRetry)
	ev := waitEvent(t, events, EventFailed)
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

func TestRiverShutdownHandsBack(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "imprint.db")
	cfg := fastConfig()
	cfg.ShutdownGrace = 50 * time.Millisecond
	db, e := openRiver(t, path, cfg)
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
	_, e2 := openRiver(t, path, fastConfig())
	e2.Handle(imprint.JobCapture, func(context.Context, imprint.Job) error { return nil })
	events, _ := runRiver(t, e2)
	if ev := waitEvent(t, events, EventDone); ev.job.ID != job.ID {
		t.Errorf("next start completed job %d, want %d", ev.job.ID, job.ID)
	}
}

func TestRiverRecoversJobOfCrashedProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "imprint.db")
	cfg := fastConfig()
	cfg.Workers = 1
	cfg.ShutdownGrace = 50 * time.Millisecond
	// The "crashed" process: its handler never returns while the second
	// process starts on the same file.
	_, crashed := openRiver(t, path, cfg)
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

	db2, restarted := openRiver(t, path, cfg)
	if st := jobStats(t, db2); st.Running != 1 {
		t.Fatalf("stats before restart = %+v, want the job running", st)
	}
	restarted.Handle(imprint.JobExtract, func(context.Context, imprint.Job) error { return nil })
	events, _ := runRiver(t, restarted)
	ev := waitEvent(t, events, EventDone)
	if ev.job.ID != job.ID || ev.job.SessionID != "s1" {
		t.Errorf("restart completed job %d of session %q, want job %d of s1", ev.job.ID, ev.job.SessionID, job.ID)
	}
}

// TestRiverOneExtractionPerSession is TestOneExtractionPerSession on the
// River engine: enqueueing a session's extraction while one is running
// returns the running job and queues nothing, and extraction jobs of one
// session queued under other keys (as an older process may have left
// them) never run side by side, while another session's run alongside.
func TestRiverOneExtractionPerSession(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.Workers = 4
	db, e := openRiver(t, filepath.Join(t.TempDir(), "imprint.db"), cfg)
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
	select {
	case j := <-started:
		if j.ID != held.ID {
			t.Fatalf("ran job %d, want %d", j.ID, held.ID)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the extraction did not start within 20s")
	}
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
	if ev := waitEvent(t, events, EventDone); ev.job.ID != held.ID {
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
		if ev := waitEvent(t, events, EventDone); ev.job.SessionID == "held" {
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

// TestRiverUniqueKeyAfterRollback checks that a key whose job was inserted
// in a transaction that rolled back is free again, even when another job
// took the rolled-back job's id.
func TestRiverUniqueKeyAfterRollback(t *testing.T) {
	t.Parallel()
	db, e := openRiver(t, filepath.Join(t.TempDir(), "imprint.db"), fastConfig())
	ctx := t.Context()
	key := ExtractKey(scope, "s1")
	tx, err := db.WriterDB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	gone, inserted, err := e.InsertTx(ctx, tx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1", UniqueKey: key})
	if err != nil || !inserted {
		t.Fatalf("insert in the rolled-back transaction: inserted %v, %v", inserted, err)
	}
	if err := tx.Rollback(); err != nil {
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
