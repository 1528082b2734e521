package schedule

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/sqlite"
)

var scope = imprint.Scope{Tenant: "acme", User: "alice", Agent: "claude"}

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// fastConfig retries at once so tests do not wait on backoff.
func fastConfig() Config {
	return Config{Workers: 2, PollInterval: 5 * time.Millisecond, BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
		ShutdownGrace: 5 * time.Second}
}

type event struct {
	name string
	job  imprint.Job
	err  error
}

// start runs s (either engine) until the test ends (or stop is called)
// and returns the channel of its job events and a stop function that
// waits for Run.
func start(t *testing.T, s Engine) (<-chan event, func() error) {
	t.Helper()
	events := make(chan event, 100)
	s.OnEvent(func(name string, j imprint.Job, err error) { events <- event{name, j, err} })
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- s.Run(ctx) }()
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

// next waits for the next event; the timeout only guards against a hang.
func next(t *testing.T, events <-chan event) event {
	t.Helper()
	select {
	case e := <-events:
		return e
	case <-time.After(20 * time.Second):
		t.Fatal("no job event")
		return event{}
	}
}

func jobsIn(t *testing.T, st imprint.JobStore, state imprint.JobState) []imprint.Job {
	t.Helper()
	js, err := st.ListJobs(t.Context(), nil, state, 100)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func TestHandlerSuccess(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	s := New(db, fastConfig(), nil)
	var got atomic.Value
	s.Handle(imprint.JobCapture, func(ctx context.Context, j imprint.Job) error {
		got.Store(j)
		return nil
	})
	events, stop := start(t, s)
	j, err := s.Enqueue(t.Context(), imprint.Job{Kind: imprint.JobCapture, Scope: scope, SessionID: "s1", EpisodeID: "ep-1"})
	if err != nil {
		t.Fatal(err)
	}
	if j.MaxAttempts != imprint.DefaultJobMaxAttempts || j.RunAt.IsZero() {
		t.Errorf("enqueued job: max attempts %d, run_at %v; want defaults filled", j.MaxAttempts, j.RunAt)
	}
	e := next(t, events)
	if e.name != EventDone || e.job.ID != j.ID || e.err != nil {
		t.Fatalf("event = %s job %d err %v, want %s for job %d", e.name, e.job.ID, e.err, EventDone, j.ID)
	}
	if h, _ := got.Load().(imprint.Job); h.EpisodeID != "ep-1" || h.Scope != scope || h.Attempts != 1 {
		t.Errorf("handler saw %+v, want episode ep-1 of the scope, attempt 1", h)
	}
	if err := stop(); err != nil {
		t.Errorf("Run = %v, want nil after cancel", err)
	}
	if done := jobsIn(t, db, imprint.JobCompleted); len(done) != 1 || done[0].ID != j.ID {
		t.Errorf("completed jobs = %+v, want job %d", done, j.ID)
	}
}

func TestRetryWithBackoffThenSuccess(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	s := New(db, fastConfig(), nil)
	var calls atomic.Int32
	s.Handle(imprint.JobExtract, func(ctx context.Context, j imprint.Job) error {
		if calls.Add(1) < 3 {
			return fmt.Errorf("extract window: %w", imprint.ErrLLMTimeout)
		}
		return nil
	})
	events, _ := start(t, s)
	j, err := s.Enqueue(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for range 3 {
		e := next(t, events)
		names = append(names, e.name)
		if e.name == EventRetry && (!errors.Is(e.err, imprint.ErrLLMTimeout) || e.job.LastError == "" || e.job.State != imprint.JobRetryable) {
			t.Errorf("retry event: err %v, last error %q, state %q", e.err, e.job.LastError, e.job.State)
		}
	}
	if d := fmt.Sprint(names); d != fmt.Sprint([]string{EventRetry, EventRetry, EventDone}) {
		t.Errorf("events = %v, want retry, retry, done", names)
	}
	done := jobsIn(t, db, imprint.JobCompleted)
	if len(done) != 1 || done[0].ID != j.ID || done[0].Attempts != 3 {
		t.Errorf("completed = %+v, want job %d after 3 attempts", done, j.ID)
	}
}

func TestFinalFailureKeepsLastError(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	cfg := fastConfig()
	cfg.MaxAttempts = 3
	s := New(db, cfg, nil)
	var calls atomic.Int32
	s.Handle(imprint.JobExtract, func(ctx context.Context, j imprint.Job) error {
		return fmt.Errorf("attempt %d: %w", calls.Add(1), imprint.ErrLLMUnavailable)
	})
	events, _ := start(t, s)
	if _, err := s.Enqueue(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	var last event
	for last.name != EventFailed {
		last = next(t, events)
	}
	if calls.Load() != 3 {
		t.Errorf("handler ran %d times, want 3 (MaxAttempts)", calls.Load())
	}
	failed := jobsIn(t, db, imprint.JobFailed)
	if len(failed) != 1 || failed[0].LastError != "attempt 3: llm_unavailable" || failed[0].Attempts != 3 {
		t.Fatalf("failed jobs = %+v, want one with the last error after 3 attempts", failed)
	}
	st, err := db.JobStats(t.Context(), &scope)
	if err != nil {
		t.Fatal(err)
	}
	if st != (imprint.JobStats{Failed: 1}) {
		t.Errorf("JobStats = %+v, want one failed", st)
	}
	// A failed job frees the session's key: a new extraction can be queued.
	again, err := s.Enqueue(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil || again.ID == failed[0].ID {
		t.Errorf("enqueue after failure: job %d, %v; want a new job", again.ID, err)
	}
}

func TestMissingHandlerRetries(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	s := New(db, fastConfig(), nil)
	events, _ := start(t, s)
	if _, err := s.Enqueue(t.Context(), imprint.Job{Kind: imprint.JobEmbed, Scope: scope}); err != nil {
		t.Fatal(err)
	}
	e := next(t, events)
	if e.name != EventRetry || e.err == nil {
		t.Errorf("event = %s (%v), want a retry saying there is no handler", e.name, e.err)
	}
}

func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	ctx := t.Context()
	j, _, err := db.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobCapture, Scope: scope, EpisodeID: "ep-1"})
	if err != nil {
		t.Fatal(err)
	}
	// A process claimed the job and died.
	if claimed, err := db.ClaimJobs(ctx, time.Now(), 10); err != nil || len(claimed) != 1 {
		t.Fatalf("claim = %v, %v", claimed, err)
	}
	s := New(db, fastConfig(), nil)
	var ran atomic.Int32
	s.Handle(imprint.JobCapture, func(ctx context.Context, got imprint.Job) error {
		ran.Add(1)
		return nil
	})
	events, _ := start(t, s)
	e := next(t, events)
	if e.name != EventDone || e.job.ID != j.ID {
		t.Fatalf("event = %s for job %d, want done for %d", e.name, e.job.ID, j.ID)
	}
	if ran.Load() != 1 || len(jobsIn(t, db, imprint.JobRunning)) != 0 {
		t.Errorf("handler ran %d times; running jobs left %d", ran.Load(), len(jobsIn(t, db, imprint.JobRunning)))
	}
}

func TestShutdownHandsBackInFlightJob(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	cfg := fastConfig()
	cfg.ShutdownGrace = 20 * time.Millisecond
	s := New(db, cfg, nil)
	started := make(chan struct{})
	s.Handle(imprint.JobExtract, func(ctx context.Context, j imprint.Job) error {
		close(started)
		<-ctx.Done() // a long LLM call, cut short at shutdown
		return ctx.Err()
	})
	_, stop := start(t, s)
	j, err := s.Enqueue(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if err := stop(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	avail := jobsIn(t, db, imprint.JobAvailable)
	if len(avail) != 1 || avail[0].ID != j.ID || avail[0].Attempts != 0 || avail[0].LastError != "" {
		t.Fatalf("after shutdown available = %+v, want job %d handed back with no attempt counted", avail, j.ID)
	}

	// The next run picks it up.
	s2 := New(db, fastConfig(), nil)
	s2.Handle(imprint.JobExtract, func(ctx context.Context, j imprint.Job) error { return nil })
	events, _ := start(t, s2)
	if e := next(t, events); e.name != EventDone || e.job.ID != j.ID {
		t.Errorf("next run: %s for job %d, want done for %d", e.name, e.job.ID, j.ID)
	}
}

func TestShutdownLetsHandlerFinishWithinGrace(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	s := New(db, fastConfig(), nil) // 5 s grace
	started, release := make(chan struct{}), make(chan struct{})
	s.Handle(imprint.JobCapture, func(ctx context.Context, j imprint.Job) error {
		close(started)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	events, stop := start(t, s)
	j, err := s.Enqueue(t.Context(), imprint.Job{Kind: imprint.JobCapture, Scope: scope, EpisodeID: "ep"})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	res := make(chan error, 1)
	go func() { res <- stop() }()
	close(release) // finishes during the grace period
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if e := next(t, events); e.name != EventDone || e.job.ID != j.ID {
		t.Errorf("event %s for job %d, want done", e.name, e.job.ID)
	}
	if done := jobsIn(t, db, imprint.JobCompleted); len(done) != 1 {
		t.Errorf("completed = %d jobs, want 1", len(done))
	}
}

func TestOneExtractionPerSession(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	cfg := fastConfig()
	cfg.Workers = 4
	s := New(db, cfg, nil)
	var mu sync.Mutex
	inFlight := map[string]int{}
	maxInFlight := map[string]int{}
	s.Handle(imprint.JobExtract, func(ctx context.Context, j imprint.Job) error {
		mu.Lock()
		inFlight[j.SessionID]++
		maxInFlight[j.SessionID] = max(maxInFlight[j.SessionID], inFlight[j.SessionID])
		mu.Unlock()
		time.Sleep(3 * time.Millisecond) // overlap with other workers
		mu.Lock()
		inFlight[j.SessionID]--
		mu.Unlock()
		return nil
	})
	events, _ := start(t, s)
	// Jobs queued outside the per-session key (e.g. by an older process)
	// must still not run side by side.
	total := 0
	for i := range 4 {
		for _, sess := range []string{"s1", "s2"} {
			_, err := s.Enqueue(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: sess,
				UniqueKey: fmt.Sprintf("batch-%s-%d", sess, i)})
			if err != nil {
				t.Fatal(err)
			}
			total++
		}
	}
	for range total {
		if e := next(t, events); e.name != EventDone {
			t.Fatalf("event %s: %v", e.name, e.err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, sess := range []string{"s1", "s2"} {
		if maxInFlight[sess] != 1 {
			t.Errorf("session %s had %d extractions in flight at once, want 1", sess, maxInFlight[sess])
		}
	}
}

func TestEnqueueDedupesExtraction(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	s := New(db, fastConfig(), nil)
	ctx := t.Context()
	a, err := s.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != b.ID || a.UniqueKey != imprint.ExtractJobKey(scope, "s1") || other.ID == a.ID {
		t.Errorf("jobs %d, %d (key %q), other session %d; want the first two equal with the session key", a.ID, b.ID, a.UniqueKey, other.ID)
	}
	if n := len(jobsIn(t, db, imprint.JobAvailable)); n != 2 {
		t.Errorf("%d available jobs, want 2", n)
	}
	if imprint.ExtractJobKey(scope, "s1") != "extract:acme/alice/claude:s1" {
		t.Errorf("imprint.ExtractJobKey = %q", imprint.ExtractJobKey(scope, "s1"))
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	s := New(nil, Config{BaseBackoff: 2 * time.Second, MaxBackoff: 5 * time.Minute}, nil)
	for _, tc := range []struct {
		attempt int
		full    time.Duration
	}{
		{1, 2 * time.Second},
		{2, 4 * time.Second},
		{3, 8 * time.Second},
		{8, 256 * time.Second},
		{9, 5 * time.Minute},
		{50, 5 * time.Minute},
	} {
		t.Run(fmt.Sprint(tc.attempt), func(t *testing.T) {
			t.Parallel()
			seen := map[time.Duration]bool{}
			for range 50 {
				d := backoff(s.cfg, tc.attempt)
				if d < tc.full/2 || d > tc.full {
					t.Fatalf("backoff(%d) = %v, want within [%v, %v]", tc.attempt, d, tc.full/2, tc.full)
				}
				seen[d] = true
			}
			if len(seen) < 2 {
				t.Errorf("backoff(%d) has no jitter: always %v", tc.attempt, seen)
			}
		})
	}
}
