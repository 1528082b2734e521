package schedule

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	imprint "github.com/imprint-dev/imprint"
)

// DefaultRescueStuckJobsAfter is how long a job may run before River's
// rescuer presumes its worker dead and retries it (RiverConfig).
const DefaultRescueStuckJobsAfter = time.Hour

// extractBusySnooze is how long an extraction job waits when another
// extraction of its session is running in this process.
const extractBusySnooze = time.Second

// RiverConfig tunes a River engine. Zero fields take their defaults.
type RiverConfig struct {
	// Config: Workers (River's MaxWorkers of the one queue), PollInterval
	// (River's FetchPollInterval: SQLite has no LISTEN, so River polls),
	// MaxAttempts, BaseBackoff/MaxBackoff (the retry policy) and
	// ShutdownGrace, as for the Scheduler.
	Config
	// RescueStuckJobsAfter is River's rescuer threshold: a job running
	// this long is presumed abandoned and retried (default
	// DefaultRescueStuckJobsAfter). River has no heartbeat, so it must
	// exceed the longest job a live worker may run: a shorter value runs
	// long extractions twice. Jobs of a crashed process are handed back at
	// start instead (see Run).
	RescueStuckJobsAfter time.Duration
}

// River runs imprint's jobs on River (github.com/riverqueue/river) with its
// SQLite driver, on the store's writer pool so that a job is inserted in
// the same transaction as the rows it is about: install InsertTx, JobStats
// and ListJobs as the store's job engine. It is safe for concurrent use.
type River struct {
	st     imprint.JobStore
	reader *sql.DB
	writer *sql.DB
	cfg    RiverConfig
	log    *slog.Logger
	client *river.Client[*sql.Tx]

	mu        sync.RWMutex
	handlers  map[imprint.JobKind]Handler
	listeners []func(name string, j imprint.Job, err error)

	// stopping is set once handlers' contexts are cancelled at shutdown:
	// a job cut short then is handed back rather than failed.
	stopping atomic.Bool
	// extracting holds the sessions whose extraction runs here.
	extracting sync.Map
}

// NewRiver migrates River's tables into the database of writer (a pool of
// one connection whose transactions begin IMMEDIATE: the store's writer)
// and returns an engine whose Enqueue goes through st (whose EnqueueJob
// must call InsertTx). reader is a read pool on the same file, used by
// JobStats and ListJobs. A nil logger logs nothing.
func NewRiver(ctx context.Context, st imprint.JobStore, writer, reader *sql.DB, cfg RiverConfig, logger *slog.Logger) (*River, error) {
	if st == nil || writer == nil || reader == nil {
		return nil, imprint.Invalidf("schedule: river needs a job store, a writer and a reader")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.Config = cfg.Config.withDefaults()
	if cfg.RescueStuckJobsAfter <= 0 {
		cfg.RescueStuckJobsAfter = DefaultRescueStuckJobsAfter
	}
	e := &River{st: st, reader: reader, writer: writer, cfg: cfg, log: logger, handlers: map[imprint.JobKind]Handler{}}
	// River logs every job error and its own life at info; the engine
	// logs job outcomes itself, so River only speaks up for warnings.
	quiet := slog.New(minLevel{h: logger.Handler(), min: slog.LevelWarn})
	mig, err := rivermigrate.New(riversqlite.New(writer), &rivermigrate.Config{Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("schedule: river migrator: %w", err)
	}
	if _, err := mig.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("schedule: migrate river tables: %w: %v", imprint.ErrUnavailable, err)
	}
	if _, err := writer.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS `+uniqueKeyIndex+`
		ON river_job (json_extract(args, '$.unique_key'), kind) WHERE `+unfinishedRiver); err != nil {
		return nil, fmt.Errorf("schedule: index river jobs by unique key: %w: %v", imprint.ErrUnavailable, err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &riverWorker[captureKind]{e: e})
	river.AddWorker(workers, &riverWorker[extractKind]{e: e})
	river.AddWorker(workers, &riverWorker[embedKind]{e: e})
	cooldown := min(100*time.Millisecond, cfg.PollInterval)
	e.client, err = river.NewClient(riversqlite.New(writer), &river.Config{
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}},
		Workers:              workers,
		MaxAttempts:          cfg.MaxAttempts,
		RetryPolicy:          riverRetry{cfg: cfg.Config},
		JobTimeout:           -1, // handlers bound their own calls (llm.timeout)
		RescueStuckJobsAfter: cfg.RescueStuckJobsAfter,
		FetchPollInterval:    cfg.PollInterval,
		FetchCooldown:        cooldown,
		// SQLite has no LISTEN/NOTIFY: without PollOnly River's SQLite
		// listener polls a notification table on the writer connection
		// every 50 ms and every insert writes a notification row.
		PollOnly: true,
		Logger:   quiet,
	})
	if err != nil {
		return nil, fmt.Errorf("schedule: river client: %w", err)
	}
	return e, nil
}

// Handle registers h for jobs of kind (capture, extract or embed: River
// knows only these kinds), replacing an earlier one.
func (e *River) Handle(kind imprint.JobKind, h Handler) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.handlers[kind] = h
}

// OnEvent adds fn to the listeners told of every job outcome, as
// Scheduler.OnEvent. They are called on the worker's goroutine right
// after the handler returns, before River records the outcome.
func (e *River) OnEvent(fn func(name string, j imprint.Job, err error)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.listeners = append(e.listeners, fn)
}

// Enqueue stores j through the job store (and so through InsertTx), with
// the defaults of Scheduler.Enqueue.
func (e *River) Enqueue(ctx context.Context, j imprint.Job) (imprint.Job, error) {
	return enqueue(ctx, e.st, e.cfg.Config, j)
}

// Wake does nothing: River polls every PollInterval.
func (e *River) Wake() {}

// Run hands back the jobs a crashed process left running, starts River and
// works jobs until ctx ends. Then River stops fetching and running
// handlers get ShutdownGrace to finish; after it their contexts are
// cancelled and the jobs they were running are handed back (snoozed, the
// attempt not counted). Run returns nil after a shutdown, or an error when
// River cannot start.
//
// The hand-back at start marks every running job available again: on
// SQLite one imprint serve owns the database, so a job still running at
// start was left by a process that died. River's rescuer would find it
// only after RescueStuckJobsAfter, which must stay long (no heartbeat).
func (e *River) Run(ctx context.Context) error {
	n, err := e.handBack(ctx)
	if err != nil {
		return fmt.Errorf("schedule: recover running jobs: %w", err)
	}
	if n > 0 {
		e.log.Info("jobs of a previous run handed back", "jobs", n)
	}
	e.stopping.Store(false)
	if err := e.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("schedule: start river: %w", err)
	}
	<-ctx.Done()
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.ShutdownGrace)
	defer cancel()
	if err := e.client.Stop(gctx); err == nil {
		return nil
	}
	e.stopping.Store(true)
	xctx, cancelX := context.WithTimeout(context.WithoutCancel(ctx), handlerExitWait)
	defer cancelX()
	if err := e.client.StopAndCancel(xctx); err != nil {
		// A handler ignores its context: its job stays running in the
		// table and is handed back at the next start.
		e.log.Warn("job handlers ignored shutdown; their jobs are handed back at the next start", "error", err)
	}
	return nil
}

// handBack makes the running jobs available again.
func (e *River) handBack(ctx context.Context) (int, error) {
	r, err := e.writer.ExecContext(ctx, `UPDATE river_job SET state = 'available' WHERE state = 'running'`)
	if err != nil {
		return 0, err
	}
	n, _ := r.RowsAffected()
	return int(n), nil
}

// InsertTx enqueues j inside tx (a transaction of the writer pool): the
// sqlite store's JobEngine.Insert. With j.UniqueKey set it inserts nothing
// when an unfinished (available, scheduled, running or retryable) job holds
// the key, and returns that job and false. RunAt in the future schedules
// the job; MaxAttempts <= 0 takes Config.MaxAttempts.
func (e *River) InsertTx(ctx context.Context, tx *sql.Tx, j imprint.Job) (imprint.Job, bool, error) {
	args, err := riverArgsFor(j)
	if err != nil {
		return j, false, err
	}
	if j.UniqueKey != "" {
		// River dedups too, but its insert statement is parsed anew on
		// every call (no statement cache in its SQLite driver): look for
		// the unfinished holder of the key first, on the partial index
		// NewRiver adds.
		old, err := scanRiverJob(tx.QueryRowContext(ctx, `SELECT `+riverJobCols+` FROM river_job INDEXED BY `+uniqueKeyIndex+`
			WHERE json_extract(args, '$.unique_key') = ? AND kind = ? AND `+unfinishedRiver, j.UniqueKey, string(j.Kind)))
		if err == nil {
			return old, false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return j, false, fmt.Errorf("river unique lookup: %w", err)
		}
	}
	opts := &river.InsertOpts{MaxAttempts: j.MaxAttempts}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = e.cfg.MaxAttempts
	}
	if !j.RunAt.IsZero() && j.RunAt.Time.After(time.Now()) {
		opts.ScheduledAt = j.RunAt.Time
	}
	if j.UniqueKey != "" {
		opts.UniqueOpts = river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
			rivertype.JobStateRetryable, rivertype.JobStateScheduled}}
	}
	res, err := e.client.InsertTx(ctx, tx, args, opts)
	if err != nil {
		return j, false, fmt.Errorf("river insert: %w", err)
	}
	out, err := jobFromRow(res.Job)
	if err != nil {
		return j, false, err
	}
	return out, !res.UniqueSkippedAsDuplicate, nil
}

// riverArgsFor returns the River args of j's kind.
func riverArgsFor(j imprint.Job) (river.JobArgs, error) {
	f := jobFields{Tenant: j.Scope.Tenant, User: j.Scope.User, Agent: j.Scope.Agent, Workspace: j.Scope.Workspace,
		SessionID: j.SessionID, EpisodeID: j.EpisodeID, UniqueKey: j.UniqueKey}
	switch j.Kind {
	case imprint.JobCapture:
		return riverArgs[captureKind](f), nil
	case imprint.JobExtract:
		return riverArgs[extractKind](f), nil
	case imprint.JobEmbed:
		return riverArgs[embedKind](f), nil
	}
	return nil, imprint.Invalidf("job kind %q is not capture, extract or embed", j.Kind)
}

// uniqueKeyIndex is imprint's own index on river_job: the unfinished jobs
// by unique key. River's own unique index is on a hash of kind and args.
const uniqueKeyIndex = "imprint_river_job_unfinished_key"

// unfinishedRiver selects River's unfinished states (the index's WHERE; it
// must read exactly the same for the planner to use the index).
const unfinishedRiver = `state IN ('available', 'pending', 'scheduled', 'running', 'retryable')`

// riverStates maps each imprint job state to the River states it may
// hold (stateExpr decides between available and retryable).
var riverStates = map[imprint.JobState][]string{
	imprint.JobAvailable: {"available", "pending", "scheduled"},
	imprint.JobRunning:   {"running"},
	imprint.JobRetryable: {"retryable", "available"},
	imprint.JobFailed:    {"discarded", "cancelled"},
	imprint.JobCompleted: {"completed"},
}

// jobState maps a River state to imprint's (for a job with no error).
func jobState(s string) imprint.JobState {
	switch s {
	case "available", "pending", "scheduled":
		return imprint.JobAvailable
	case "discarded", "cancelled":
		return imprint.JobFailed
	}
	return imprint.JobState(s)
}

// stateExpr is a job's imprint state in SQL: as jobState, except that an
// available job with errors is retryable. River makes a failed job whose
// retry is due within its scheduler interval (5 s) available at once,
// with the retry time as scheduled_at, rather than retryable.
const stateExpr = `CASE WHEN state IN ('available', 'pending', 'scheduled')
		THEN CASE WHEN state = 'available' AND COALESCE(json_array_length(errors), 0) > 0 THEN 'retryable' ELSE 'available' END
	WHEN state IN ('discarded', 'cancelled') THEN 'failed' ELSE state END`

// scopeFilter is the SQL condition and arguments selecting River jobs of
// scope (tenant, user and agent, as the store scopes), "" when nil.
func scopeFilter(scope *imprint.Scope) (string, []any) {
	if scope == nil {
		return "", nil
	}
	return ` AND json_extract(args, '$.tenant') = ? AND json_extract(args, '$.user') = ? AND json_extract(args, '$.agent') = ?`,
		[]any{scope.Tenant, scope.User, scope.Agent}
}

// JobStats counts River's jobs of the scope (all scopes when nil) as
// imprint.JobStore.JobStats: scheduled and pending jobs count as
// available, discarded and cancelled ones as failed. It reads on the
// reader pool.
func (e *River) JobStats(ctx context.Context, scope *imprint.Scope) (imprint.JobStats, error) {
	var st imprint.JobStats
	where, args := scopeFilter(scope)
	rows, err := e.reader.QueryContext(ctx, `SELECT `+stateExpr+` AS st, COUNT(*) FROM river_job
		WHERE state <> 'completed'`+where+` GROUP BY st`, args...)
	if err != nil {
		return st, fmt.Errorf("river job stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return st, fmt.Errorf("river job stats: %w", err)
		}
		switch imprint.JobState(s) {
		case imprint.JobAvailable:
			st.Available += n
		case imprint.JobRunning:
			st.Running += n
		case imprint.JobRetryable:
			st.Retryable += n
		case imprint.JobFailed:
			st.Failed += n
		}
	}
	return st, rows.Err()
}

// riverTime is how ListJobs reads River's timestamps.
const riverTime = "2006-01-02T15:04:05.000Z"

// ListJobs returns up to limit (100 when <= 0) River jobs of the scope
// (all scopes when nil) in state, newest first, with the last error of
// each; UpdatedAt is when the job finished or was last attempted.
// ErrInvalid for an unknown state.
func (e *River) ListJobs(ctx context.Context, scope *imprint.Scope, state imprint.JobState, limit int) ([]imprint.Job, error) {
	states, ok := riverStates[state]
	if !ok {
		return nil, imprint.Invalidf("job state %q is not available, running, retryable, failed or completed", state)
	}
	if limit <= 0 {
		limit = 100
	}
	where, args := scopeFilter(scope)
	q := `SELECT ` + riverJobCols + ` FROM river_job WHERE state IN (?` + strings.Repeat(", ?", len(states)-1) + `)
		AND (` + stateExpr + `) = ?` + where + ` ORDER BY id DESC LIMIT ?`
	qargs := make([]any, 0, len(states)+len(args)+2)
	for _, s := range states {
		qargs = append(qargs, s)
	}
	qargs = append(append(append(qargs, string(state)), args...), limit)
	rows, err := e.reader.QueryContext(ctx, q, qargs...)
	if err != nil {
		return nil, fmt.Errorf("river list jobs: %w", err)
	}
	defer rows.Close()
	out := []imprint.Job{}
	for rows.Next() {
		j, err := scanRiverJob(rows)
		if err != nil {
			return nil, fmt.Errorf("river list jobs: %w", err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// riverJobCols are the river_job columns scanRiverJob reads.
const riverJobCols = `id, kind, json(args), ` + stateExpr + `, attempt, max_attempts, COALESCE(json_extract(errors, '$[#-1].error'), ''),
	strftime('%Y-%m-%dT%H:%M:%fZ', scheduled_at), strftime('%Y-%m-%dT%H:%M:%fZ', created_at),
	strftime('%Y-%m-%dT%H:%M:%fZ', COALESCE(finalized_at, attempted_at, created_at))`

// scanRiverJob reads one row of riverJobCols.
func scanRiverJob(row interface{ Scan(...any) error }) (imprint.Job, error) {
	var j imprint.Job
	var kind, argsJSON, st, runAt, created, updated string
	if err := row.Scan(&j.ID, &kind, &argsJSON, &st, &j.Attempts, &j.MaxAttempts, &j.LastError, &runAt, &created, &updated); err != nil {
		return j, err
	}
	var f jobFields
	if err := json.Unmarshal([]byte(argsJSON), &f); err != nil {
		return j, fmt.Errorf("job %d args: %w", j.ID, err)
	}
	f.fill(&j)
	j.Kind, j.State = imprint.JobKind(kind), imprint.JobState(st)
	j.RunAt, j.CreatedAt, j.UpdatedAt = parseRiverTime(runAt), parseRiverTime(created), parseRiverTime(updated)
	return j, nil
}

func parseRiverTime(s string) imprint.Time {
	t, err := time.Parse(riverTime, s)
	if err != nil {
		return imprint.Time{}
	}
	return imprint.At(t)
}

// jobFromRow converts a River job row to an imprint job.
func jobFromRow(row *rivertype.JobRow) (imprint.Job, error) {
	if row == nil {
		return imprint.Job{}, errors.New("river returned no job")
	}
	var f jobFields
	if err := json.Unmarshal(row.EncodedArgs, &f); err != nil {
		return imprint.Job{}, fmt.Errorf("river job %d args: %w", row.ID, err)
	}
	j := imprint.Job{ID: row.ID, Kind: imprint.JobKind(row.Kind), State: jobState(string(row.State)),
		Attempts: row.Attempt, MaxAttempts: row.MaxAttempts,
		RunAt: imprint.At(row.ScheduledAt), CreatedAt: imprint.At(row.CreatedAt), UpdatedAt: imprint.At(row.CreatedAt)}
	f.fill(&j)
	if n := len(row.Errors); n > 0 {
		j.LastError = row.Errors[n-1].Error
		if row.State == rivertype.JobStateAvailable {
			j.State = imprint.JobRetryable
		}
	}
	if row.FinalizedAt != nil {
		j.UpdatedAt = imprint.At(*row.FinalizedAt)
	} else if row.AttemptedAt != nil {
		j.UpdatedAt = imprint.At(*row.AttemptedAt)
	}
	return j, nil
}

// work runs the handler of one River job and tells River the outcome.
func (e *River) work(ctx context.Context, row *rivertype.JobRow) error {
	j, err := jobFromRow(row)
	if err != nil {
		return err
	}
	j.State = imprint.JobRunning
	e.mu.RLock()
	h := e.handlers[j.Kind]
	ls := append([]func(string, imprint.Job, error){}, e.listeners...)
	e.mu.RUnlock()
	if j.Kind == imprint.JobExtract {
		// The unique key keeps one unfinished extraction per session; this
		// also covers jobs enqueued without it.
		key := j.Scope.String() + "\x00" + j.SessionID
		if _, busy := e.extracting.LoadOrStore(key, struct{}{}); busy {
			return river.JobSnooze(extractBusySnooze)
		}
		defer e.extracting.Delete(key)
	}
	if h == nil {
		err = fmt.Errorf("no handler for job kind %q", j.Kind)
	} else {
		err = call(ctx, h, j)
	}
	log := e.log.With("job_id", j.ID, "kind", j.Kind, "session_id", j.SessionID, "episode_id", j.EpisodeID, "attempt", j.Attempts)
	switch {
	case err == nil:
		j.State = imprint.JobCompleted
		emitTo(e.log, ls, EventDone, j, nil)
		return nil
	case ctx.Err() != nil && e.stopping.Load():
		// Cut short by shutdown: handed back, the attempt not counted.
		log.Info("job handed back at shutdown", "reason", err)
		return river.JobSnooze(0)
	}
	if d, ok := BudgetSnooze(err, time.Now(), e.cfg.BudgetRecheck); ok {
		// River does not count a snooze as an attempt.
		log.Info("job waits for the llm budget", "wait", d)
		j.State, j.RunAt = imprint.JobAvailable, imprint.At(time.Now().Add(d))
		emitTo(e.log, ls, EventWait, j, err)
		return river.JobSnooze(d)
	}
	j.LastError = err.Error()
	if j.Attempts >= j.MaxAttempts {
		j.State = imprint.JobFailed
		log.Error("job failed for good", "error", err)
		emitTo(e.log, ls, EventFailed, j, err)
		return err
	}
	j.State = imprint.JobRetryable
	log.Warn("job failed; will retry", "error", err)
	emitTo(e.log, ls, EventRetry, j, err)
	return err
}

// riverRetry is River's retry policy: the Scheduler's backoff.
type riverRetry struct{ cfg Config }

// NextRetry implements river.ClientRetryPolicy.
func (p riverRetry) NextRetry(row *rivertype.JobRow) time.Time {
	return time.Now().Add(backoff(p.cfg, row.Attempt))
}

// jobFields are the args of every River job: where it belongs and what it
// is about. Only UniqueKey makes jobs unique.
type jobFields struct {
	Tenant    string `json:"tenant"`
	User      string `json:"user"`
	Agent     string `json:"agent"`
	Workspace string `json:"workspace,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	EpisodeID string `json:"episode_id,omitempty"`
	UniqueKey string `json:"unique_key,omitempty" river:"unique"`
}

func (f jobFields) fill(j *imprint.Job) {
	j.Scope = imprint.Scope{Tenant: f.Tenant, User: f.User, Agent: f.Agent, Workspace: f.Workspace}
	j.SessionID, j.EpisodeID, j.UniqueKey = f.SessionID, f.EpisodeID, f.UniqueKey
}

// jobKind names the River kind of an args type.
type jobKind interface{ kind() imprint.JobKind }

type (
	captureKind struct{}
	extractKind struct{}
	embedKind   struct{}
)

func (captureKind) kind() imprint.JobKind { return imprint.JobCapture }
func (extractKind) kind() imprint.JobKind { return imprint.JobExtract }
func (embedKind) kind() imprint.JobKind   { return imprint.JobEmbed }

// riverArgs are the River args of jobs of kind K.
type riverArgs[K jobKind] jobFields

// Kind implements river.JobArgs.
func (riverArgs[K]) Kind() string {
	var k K
	return string(k.kind())
}

// riverWorker runs River jobs of kind K through the engine's handlers.
type riverWorker[K jobKind] struct {
	river.WorkerDefaults[riverArgs[K]]
	e *River
}

// Work implements river.Worker.
func (w *riverWorker[K]) Work(ctx context.Context, job *river.Job[riverArgs[K]]) error {
	return w.e.work(ctx, job.JobRow)
}

// minLevel drops records below min.
type minLevel struct {
	h   slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.h.Enabled(ctx, l)
}
func (m minLevel) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }
func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h: m.h.WithAttrs(as), min: m.min}
}
func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h: m.h.WithGroup(name), min: m.min}
}
