package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// Event names passed to OnEvent listeners.
const (
	// EventDone: a handler succeeded and the job is completed.
	EventDone = "job.done"
	// EventRetry: a handler failed and the job will run again.
	EventRetry = "job.retry"
	// EventFailed: a handler failed for the last time; the job is kept as
	// failed with its last error.
	EventFailed = "job.failed"
	// EventWait: an LLM budget refused the handler's work; the job runs
	// again when the budget frees up, the attempt not counted.
	EventWait = "job.wait"
)

// Handler does the work of one job. It must honour ctx: the context is
// cancelled when the scheduler shuts down and the grace period is over.
// A nil error completes the job; an error retries it with backoff, except
// an error of kind imprint.ErrLLMBudget: the job then waits for the budget
// (see BudgetSnooze) without counting the attempt.
type Handler func(ctx context.Context, j imprint.Job) error

// Config tunes a Scheduler. Zero fields take their defaults.
type Config struct {
	// Workers is how many jobs run at once (default 2).
	Workers int
	// PollInterval is how often the store is polled for due jobs when
	// nothing wakes the scheduler (default 500ms).
	PollInterval time.Duration
	// MaxAttempts is the attempts a job gets when it does not say
	// (default imprint.DefaultJobMaxAttempts, 8).
	MaxAttempts int
	// BaseBackoff is the delay before the first retry; each retry doubles
	// it, up to MaxBackoff, with jitter (defaults 2s and 5m).
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
	// ShutdownGrace is how long running handlers may finish after Run's
	// context ends before their own context is cancelled (default 10s).
	ShutdownGrace time.Duration
	// BudgetRecheck is the longest a job refused by an LLM budget waits
	// before it runs again (and asks the budget again, which costs no
	// call), even when the budget frees up later: a budget raised by a
	// restart is noticed within it (default 1m).
	BudgetRecheck time.Duration
}

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 500 * time.Millisecond
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = imprint.DefaultJobMaxAttempts
	}
	if c.BaseBackoff <= 0 {
		c.BaseBackoff = 2 * time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 5 * time.Minute
	}
	if c.MaxBackoff < c.BaseBackoff {
		c.MaxBackoff = c.BaseBackoff
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = 10 * time.Second
	}
	if c.BudgetRecheck <= 0 {
		c.BudgetRecheck = time.Minute
	}
	return c
}

// handlerExitWait bounds how long Run waits, after cancelling handlers'
// contexts, for a handler that ignores its context; its job is then handed
// back without it.
const handlerExitWait = 5 * time.Second

// BudgetSnooze is how long a job whose handler returned err waits, and
// whether err is an LLM budget's refusal (imprint.ErrLLMBudget): until the
// budget frees up, between a second and recheck (recheck when the refusal
// names no time).
func BudgetSnooze(err error, now time.Time, recheck time.Duration) (time.Duration, bool) {
	if !errors.Is(err, imprint.ErrLLMBudget) {
		return 0, false
	}
	until, _ := imprint.BudgetWait(err)
	if until.IsZero() {
		return recheck, true
	}
	return min(max(until.Sub(now), time.Second), max(recheck, time.Second)), true
}

// bookkeepingTimeout bounds the store calls that record a job's outcome;
// they run even while Run's context is ending.
const bookkeepingTimeout = 10 * time.Second

// Scheduler runs durable jobs from a JobStore. Register handlers with
// Handle before Run. It is safe for concurrent use.
type Scheduler struct {
	st  imprint.JobStore
	cfg Config
	log *slog.Logger

	mu        sync.RWMutex
	handlers  map[imprint.JobKind]Handler
	listeners []func(name string, j imprint.Job, err error)

	wake chan struct{}
}

// New returns a Scheduler over st; a nil logger logs nothing.
func New(st imprint.JobStore, cfg Config, logger *slog.Logger) *Scheduler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Scheduler{st: st, cfg: cfg.withDefaults(), log: logger,
		handlers: map[imprint.JobKind]Handler{}, wake: make(chan struct{}, 1)}
}

// Handle registers h for jobs of kind, replacing an earlier one. A claimed
// job whose kind has no handler fails (and is retried) with an error
// saying so.
func (s *Scheduler) Handle(kind imprint.JobKind, h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[kind] = h
}

// OnEvent adds fn to the listeners told of every job outcome: EventDone,
// EventRetry (with the handler's error) and EventFailed (with the final
// error). Listeners are called on the worker's goroutine and must not block.
func (s *Scheduler) OnEvent(fn func(name string, j imprint.Job, err error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, fn)
}

// Enqueue stores j: MaxAttempts defaults to Config.MaxAttempts, RunAt to
// now, and an extraction job's UniqueKey to imprint.ExtractJobKey, so a session has at
// most one unfinished extraction job (Enqueue then returns that one). It
// wakes the scheduler. Errors of kind ErrInvalid come from the store.
func (s *Scheduler) Enqueue(ctx context.Context, j imprint.Job) (imprint.Job, error) {
	got, err := enqueue(ctx, s.st, s.cfg, j)
	if err != nil {
		return got, err
	}
	s.Wake()
	return got, nil
}

// enqueue fills j's defaults from cfg (MaxAttempts, RunAt, an extraction
// job's UniqueKey) and stores it in st.
func enqueue(ctx context.Context, st imprint.JobStore, cfg Config, j imprint.Job) (imprint.Job, error) {
	if j.MaxAttempts <= 0 {
		j.MaxAttempts = cfg.MaxAttempts
	}
	if j.RunAt.IsZero() {
		j.RunAt = imprint.Now()
	}
	if j.Kind == imprint.JobExtract && j.UniqueKey == "" {
		j.UniqueKey = imprint.ExtractJobKey(j.Scope, j.SessionID)
	}
	got, _, err := st.EnqueueJob(ctx, j)
	if err != nil {
		return got, fmt.Errorf("enqueue %s job: %w", j.Kind, err)
	}
	return got, nil
}

// Wake makes a running scheduler poll for due jobs now.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run runs jobs until ctx ends. At start it hands back the jobs a crashed
// process left running. It then claims due jobs whenever a worker is free
// (on Wake, every PollInterval, and when a job finishes) and runs each on
// its own goroutine, at most Workers at a time. When ctx ends it stops
// claiming, lets running handlers finish for ShutdownGrace, then cancels
// their context; a job whose handler did not finish is handed back
// (ReleaseJob) for the next start. Run returns nil after a shutdown, or an
// error when the store cannot be read at start.
func (s *Scheduler) Run(ctx context.Context) error {
	n, err := s.st.ResetRunningJobs(ctx)
	if err != nil {
		return fmt.Errorf("schedule: recover running jobs: %w", err)
	}
	if n > 0 {
		s.log.Info("jobs of a previous run handed back", "jobs", n)
	}
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()

	var (
		wg      sync.WaitGroup
		runMu   sync.Mutex
		running = map[int64]imprint.Job{}
	)
	done := make(chan struct{}, s.cfg.Workers)
	free := s.cfg.Workers
	ticker := time.NewTicker(s.cfg.PollInterval)
	defer ticker.Stop()

	for ctx.Err() == nil {
		if free > 0 {
			jobs, err := s.st.ClaimJobs(ctx, time.Now(), free)
			if err != nil && ctx.Err() == nil {
				s.log.Warn("claim jobs failed", "error", err)
			}
			for _, j := range jobs {
				free--
				runMu.Lock()
				running[j.ID] = j
				runMu.Unlock()
				wg.Add(1)
				go func() {
					defer wg.Done()
					s.runJob(workCtx, j)
					runMu.Lock()
					delete(running, j.ID)
					runMu.Unlock()
					done <- struct{}{}
				}()
			}
		}
		select {
		case <-ctx.Done():
		case <-done:
			free++
		case <-s.wake:
		case <-ticker.C:
		}
	}

	// Shutdown: no more claims; give running handlers their grace.
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	grace := time.NewTimer(s.cfg.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-finished:
		return nil
	case <-grace.C:
	}
	cancelWork()
	exit := time.NewTimer(handlerExitWait)
	defer exit.Stop()
	select {
	case <-finished:
		return nil
	case <-exit.C:
	}
	// Handlers that ignore their context: hand their jobs back anyway.
	runMu.Lock()
	stuck := make([]imprint.Job, 0, len(running))
	for _, j := range running {
		stuck = append(stuck, j)
	}
	runMu.Unlock()
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bookkeepingTimeout)
	defer cancel()
	for _, j := range stuck {
		if err := s.st.ReleaseJob(bctx, j.ID); err != nil {
			s.log.Warn("hand back a stuck job failed", "job_id", j.ID, "kind", j.Kind, "error", err)
		} else {
			s.log.Warn("job handler ignored shutdown; job handed back", "job_id", j.ID, "kind", j.Kind)
		}
	}
	return nil
}

// runJob runs j's handler and records the outcome.
func (s *Scheduler) runJob(workCtx context.Context, j imprint.Job) {
	s.mu.RLock()
	h := s.handlers[j.Kind]
	s.mu.RUnlock()
	var err error
	if h == nil {
		err = fmt.Errorf("no handler for job kind %q", j.Kind)
	} else {
		err = call(workCtx, h, j)
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(workCtx), bookkeepingTimeout)
	defer cancel()
	log := s.log.With("job_id", j.ID, "kind", j.Kind, "session_id", j.SessionID, "episode_id", j.EpisodeID, "attempt", j.Attempts)
	switch {
	case err == nil:
		if err := s.st.CompleteJob(bctx, j.ID); err != nil {
			log.Error("record job completion failed", "error", err)
			return
		}
		j.State = imprint.JobCompleted
		s.emit(EventDone, j, nil)
	case workCtx.Err() != nil:
		// Cut short by shutdown: not the job's fault, not an attempt.
		if err := s.st.ReleaseJob(bctx, j.ID); err != nil {
			log.Error("hand back job failed", "error", err)
			return
		}
		log.Info("job handed back at shutdown", "reason", err)
	case s.snooze(bctx, log, j, err):
	default:
		max := j.MaxAttempts
		if max <= 0 {
			max = s.cfg.MaxAttempts
		}
		final := j.Attempts >= max
		retryAt := time.Now().Add(backoff(s.cfg, j.Attempts))
		if ferr := s.st.FailJob(bctx, j.ID, err.Error(), retryAt, final); ferr != nil {
			log.Error("record job failure failed", "error", ferr, "job_error", err)
			return
		}
		j.LastError = err.Error()
		if final {
			j.State = imprint.JobFailed
			log.Error("job failed for good", "error", err)
			s.emit(EventFailed, j, err)
			return
		}
		j.State, j.RunAt = imprint.JobRetryable, imprint.At(retryAt)
		log.Warn("job failed; will retry", "error", err, "retry_at", j.RunAt)
		s.emit(EventRetry, j, err)
	}
}

// snooze hands j back for when the budget that refused err frees up and
// reports whether it did.
func (s *Scheduler) snooze(ctx context.Context, log *slog.Logger, j imprint.Job, err error) bool {
	d, ok := BudgetSnooze(err, time.Now(), s.cfg.BudgetRecheck)
	if !ok {
		return false
	}
	if serr := s.st.SnoozeJob(ctx, j.ID, time.Now().Add(d)); serr != nil {
		log.Error("snooze job failed", "error", serr, "job_error", err)
		return true
	}
	j.State, j.RunAt, j.Attempts = imprint.JobAvailable, imprint.At(time.Now().Add(d)), j.Attempts-1
	log.Info("job waits for the llm budget", "wait", d)
	s.emit(EventWait, j, err)
	return true
}

// call runs h, turning a panic into an error.
func call(ctx context.Context, h Handler, j imprint.Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("job handler panicked: %v", r)
		}
	}()
	return h(ctx, j)
}

// backoff is the delay before the retry after attempt under c: BaseBackoff
// doubled per earlier attempt, capped at MaxBackoff, jittered into
// [d/2, d].
func backoff(c Config, attempt int) time.Duration {
	d := c.BaseBackoff
	for i := 1; i < attempt && d < c.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.MaxBackoff)
	half := d / 2
	return half + rand.N(d-half+1)
}

func (s *Scheduler) emit(name string, j imprint.Job, err error) {
	s.mu.RLock()
	ls := append([]func(string, imprint.Job, error){}, s.listeners...)
	s.mu.RUnlock()
	emitTo(s.log, ls, name, j, err)
}

// emitTo calls each listener, logging instead of crashing on a panic.
func emitTo(log *slog.Logger, ls []func(string, imprint.Job, error), name string, j imprint.Job, err error) {
	for _, fn := range ls {
		func() {
			defer func() {
				if r := recover(); r != nil {
					log.Error("job event listener panicked", "event", name, "panic", r)
				}
			}()
			fn(name, j, err)
		}()
	}
}

// errNoStore is returned by Planner methods without a store.
var errNoStore = errors.New("schedule: planner has no store")
