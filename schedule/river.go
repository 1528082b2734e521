package schedule

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
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
	// Listen lets River listen for inserted jobs instead of only polling
	// every PollInterval: for a driver with a real listener (PostgreSQL's
	// LISTEN/NOTIFY). Leave it off on SQLite, whose emulated listener polls
	// a notification table on the writer connection every 50 ms and writes
	// a notification row on every insert.
	Listen bool
	// Nodes, when set, says the database is shared by several processes
	// (nodes, e.g. imprint serve on PostgreSQL): the engine then never
	// hands back every running job at start, which would take jobs live
	// nodes are running. Each node renews a lease under NodeID every
	// LeaseTTL/4, and every node hands back the running jobs last
	// attempted by a node whose lease lapsed (it crashed, or was killed):
	// another node, or the crashed one restarted, runs them within about
	// LeaseTTL and a quarter of it.
	Nodes Nodes
	// NodeID names this node in its lease and in River's attempted_by
	// (River's client ID); empty makes one of the host name, the process
	// id and random bits.
	NodeID string
	// LeaseTTL is how long a node's lease lasts without renewal (default
	// DefaultLeaseTTL).
	LeaseTTL time.Duration
}

// With a listener (RiverConfig.Listen) River polls for jobs at least every
// listenPollInterval, and fetches at most every listenFetchCooldown.
const (
	listenPollInterval  = 100 * time.Millisecond
	listenFetchCooldown = 20 * time.Millisecond
)

// DefaultLeaseTTL is how long a node's lease lasts without renewal: its
// running jobs are handed back once it lapsed.
const DefaultLeaseTTL = 20 * time.Second

// Nodes keeps the leases of the nodes sharing a River database
// (RiverConfig.Nodes). The PostgreSQL store implements it.
type Nodes interface {
	// RenewLease records that node id is alive now.
	RenewLease(ctx context.Context, id string) error
	// LiveNodes returns the ids of the nodes whose lease was renewed
	// within the last ttl.
	LiveNodes(ctx context.Context, ttl time.Duration) (map[string]bool, error)
}

// newNodeID returns a node id unique to this process: host, pid, random.
func newNodeID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", strings.ReplaceAll(host, " ", "_"), os.Getpid(), hex.EncodeToString(b))
}

// River runs imprint's jobs on River (github.com/riverqueue/river) through
// the River driver it is given, whose transactions are of type TTx: the
// store's own (riversqlite on the store's writer pool, *sql.Tx; riverpgxv5,
// pgx.Tx). Install it as the store's imprint.JobEngine, so that a job is
// inserted with River's InsertTx in the same transaction as the rows it is
// about; JobStats and ListJobs read through River's client API. It is safe
// for concurrent use.
type River[TTx any] struct {
	st     imprint.JobStore
	driver riverdriver.Driver[TTx]
	cfg    RiverConfig
	log    *slog.Logger
	client *river.Client[TTx]

	mu        sync.RWMutex
	handlers  map[imprint.JobKind]Handler
	listeners []func(name string, j imprint.Job, err error)

	// stopping is set once handlers' contexts are cancelled at shutdown:
	// a job cut short then is handed back rather than failed.
	stopping atomic.Bool
	// extracting holds the sessions whose extraction runs here.
	extracting sync.Map
	// holders remembers, by kind and unique key, the job InsertTx last saw
	// holding the key (see InsertTx); at most maxHolders keys.
	holdersMu sync.Mutex
	holders   map[string]int64
}

// maxHolders bounds River.holders: past it the remembered keys are
// forgotten, and each is learnt again from River at its next insert.
const maxHolders = 10_000

// holder returns the job remembered holding key.
func (e *River[TTx]) holder(key string) (int64, bool) {
	e.holdersMu.Lock()
	defer e.holdersMu.Unlock()
	id, ok := e.holders[key]
	return id, ok
}

// setHolder remembers job id holding key; id 0 forgets the key.
func (e *River[TTx]) setHolder(key string, id int64) {
	e.holdersMu.Lock()
	defer e.holdersMu.Unlock()
	if id == 0 {
		delete(e.holders, key)
		return
	}
	if e.holders == nil || len(e.holders) >= maxHolders {
		e.holders = map[string]int64{}
	}
	e.holders[key] = id
}

// The River engine is the store's job engine.
var _ imprint.JobEngine[struct{}] = (*River[struct{}])(nil)

// NewRiver migrates River's tables with driver (built by the caller on the
// store's database: on SQLite a pool of one connection whose transactions
// begin IMMEDIATE, the store's writer) and returns an engine whose Enqueue
// goes through st, a store with the engine installed (imprint.JobEngineHost),
// so that its EnqueueJob calls InsertTx. A nil logger logs nothing.
func NewRiver[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], st imprint.JobStore, cfg RiverConfig, logger *slog.Logger) (*River[TTx], error) {
	if st == nil || driver == nil {
		return nil, imprint.Invalidf("schedule: river needs a job store and a river driver")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.Config = cfg.Config.withDefaults()
	if cfg.RescueStuckJobsAfter <= 0 {
		cfg.RescueStuckJobsAfter = DefaultRescueStuckJobsAfter
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.NodeID == "" {
		cfg.NodeID = newNodeID()
	}
	e := &River[TTx]{st: st, driver: driver, cfg: cfg, log: logger, handlers: map[imprint.JobKind]Handler{}}
	// River logs every job error and its own life at info; the engine
	// logs job outcomes itself, so River only speaks up for warnings.
	quiet := slog.New(minLevel{h: logger.Handler(), min: slog.LevelWarn})
	mig, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("schedule: river migrator: %w", err)
	}
	if _, err := mig.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("schedule: migrate river tables: %w: %v", imprint.ErrUnavailable, err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &riverWorker[captureKind, TTx]{e: e})
	river.AddWorker(workers, &riverWorker[extractKind, TTx]{e: e})
	river.AddWorker(workers, &riverWorker[embedKind, TTx]{e: e})
	poll, cooldown := cfg.PollInterval, min(100*time.Millisecond, cfg.PollInterval)
	if cfg.Listen {
		// River fetches when told of an insert, and when a finishing job
		// frees a worker only if its last fetch was cut short by full
		// workers; a worker freed otherwise (its last fetch found fewer
		// jobs than free workers, as when several nodes share the jobs)
		// waits for the next poll while jobs are available. With a real
		// listener a poll is one cheap query, so poll often, and let
		// fetches follow each other closely.
		poll, cooldown = min(poll, listenPollInterval), min(cooldown, listenFetchCooldown)
	}
	e.client, err = river.NewClient(driver, &river.Config{
		ID:                   cfg.NodeID,
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}},
		Workers:              workers,
		MaxAttempts:          cfg.MaxAttempts,
		RetryPolicy:          riverRetry{cfg: cfg.Config},
		JobTimeout:           -1, // handlers bound their own calls (llm.timeout)
		RescueStuckJobsAfter: cfg.RescueStuckJobsAfter,
		FetchPollInterval:    poll,
		FetchCooldown:        cooldown,
		PollOnly:             !cfg.Listen,
		Logger:               quiet,
	})
	if err != nil {
		return nil, fmt.Errorf("schedule: river client: %w", err)
	}
	return e, nil
}

// Handle registers h for jobs of kind (capture, extract or embed: River
// knows only these kinds), replacing an earlier one.
func (e *River[TTx]) Handle(kind imprint.JobKind, h Handler) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.handlers[kind] = h
}

// OnEvent adds fn to the listeners told of every job outcome, as
// Scheduler.OnEvent. They are called on the worker's goroutine right
// after the handler returns: a completed job is recorded completed by
// then; other outcomes River records after them.
func (e *River[TTx]) OnEvent(fn func(name string, j imprint.Job, err error)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.listeners = append(e.listeners, fn)
}

// Enqueue stores j through the job store (and so through InsertTx), with
// the defaults of Scheduler.Enqueue. When an unfinished job this engine
// last saw holding j's unique key still holds it, Enqueue returns that
// job, read by id outside any store transaction (one statement): the
// planner asks again every tick for each session whose extraction is
// queued or running, and the unique insert would only join it.
func (e *River[TTx]) Enqueue(ctx context.Context, j imprint.Job) (imprint.Job, error) {
	return e.EnqueueListed(ctx, j, time.Time{})
}

// EnqueueListed is Enqueue for a job decided from a read of the store made
// at listedAt (the planner's list of sessions to extract): when the job
// this engine last saw holding j's unique key ended completed at or after
// listedAt (within listedSkipWithin of it), that read may predate the
// job's work (a session listed as pending before its extraction moved the
// cursor), so nothing is enqueued and the ended job is returned; the next
// read decides afresh (a zero listedAt is Enqueue). Inserting there made a second extraction job that
// found nothing to do, up to six per run of the LLM-bound nodes benchmark.
func (e *River[TTx]) EnqueueListed(ctx context.Context, j imprint.Job, listedAt time.Time) (imprint.Job, error) {
	key := j.UniqueKey
	if j.Kind == imprint.JobExtract && key == "" {
		key = imprint.ExtractJobKey(j.Scope, j.SessionID)
	}
	if key != "" {
		if id, ok := e.holder(string(j.Kind) + "\x00" + key); ok {
			if row, err := e.client.JobGet(ctx, id); err == nil {
				want := j
				want.UniqueKey = key
				if old, held := holds(row, want); held {
					return old, nil
				}
				if old, ok := endedSince(row, want, listedAt); ok && !listedAt.IsZero() {
					return old, nil
				}
			}
		}
	}
	return enqueue(ctx, e.st, e.cfg.Config, j)
}

// listedSkipWithin bounds how long after a listing a job's completion
// makes EnqueueListed skip: the job ended between the listing and the
// enqueue (milliseconds apart on one clock). The completion time is the
// clock of the node that ran the job: whatever that clock's skew from the
// planner's, a skip can happen only for listings within this much before
// it, so a session still pending waits at most this long plus a tick.
const listedSkipWithin = time.Second

// endedSince returns row as a job when it is a job of j's kind and unique
// key that completed at or after t, and no more than listedSkipWithin
// after it.
func endedSince(row *rivertype.JobRow, j imprint.Job, t time.Time) (imprint.Job, bool) {
	if row == nil || row.Kind != string(j.Kind) || row.State != rivertype.JobStateCompleted ||
		row.FinalizedAt == nil || row.FinalizedAt.Before(t) || row.FinalizedAt.After(t.Add(listedSkipWithin)) {
		return imprint.Job{}, false
	}
	old, err := jobFromRow(row)
	if err != nil || old.UniqueKey != j.UniqueKey {
		return imprint.Job{}, false
	}
	return old, true
}

// Wake does nothing: River polls every PollInterval.
func (e *River[TTx]) Wake() {}

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
//
// With RiverConfig.Nodes (a database shared by several nodes) there is no
// hand-back at start: the node renews its lease and, while it runs, hands
// back only the jobs of nodes whose lease lapsed (see RiverConfig).
func (e *River[TTx]) Run(ctx context.Context) error {
	var leases sync.WaitGroup
	if e.cfg.Nodes != nil {
		if err := e.cfg.Nodes.RenewLease(ctx, e.cfg.NodeID); err != nil {
			return fmt.Errorf("schedule: node lease: %w", err)
		}
		lctx, stopLeases := context.WithCancel(ctx)
		defer func() { stopLeases(); leases.Wait() }()
		leases.Add(1)
		go func() { defer leases.Done(); e.keepLease(lctx) }()
	} else {
		n, err := e.handBack(ctx, nil)
		if err != nil {
			return fmt.Errorf("schedule: recover running jobs: %w", err)
		}
		if n > 0 {
			e.log.Info("jobs of a previous run handed back", "jobs", n)
		}
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

// keepLease renews the node's lease every LeaseTTL/4 and each time hands
// back the running jobs of nodes whose lease lapsed, until ctx ends.
func (e *River[TTx]) keepLease(ctx context.Context) {
	t := time.NewTicker(e.cfg.LeaseTTL / 4)
	defer t.Stop()
	for {
		if n, err := e.handBackLapsed(ctx); err != nil {
			if ctx.Err() == nil {
				e.log.Warn("jobs of stopped nodes not handed back", "error", err)
			}
		} else if n > 0 {
			e.log.Info("jobs of a stopped node handed back", "jobs", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := e.cfg.Nodes.RenewLease(ctx, e.cfg.NodeID); err != nil && ctx.Err() == nil {
			e.log.Warn("node lease not renewed", "node", e.cfg.NodeID, "error", err)
		}
	}
}

// handBackLapsed hands back the running jobs last attempted by a node
// whose lease lapsed (never this node's own), and attempted more than a
// lease ago, so a node that just started and claimed is not mistaken for
// a stopped one.
func (e *River[TTx]) handBackLapsed(ctx context.Context) (int, error) {
	live, err := e.cfg.Nodes.LiveNodes(ctx, e.cfg.LeaseTTL)
	if err != nil {
		return 0, err
	}
	live[e.cfg.NodeID] = true
	before := time.Now().Add(-e.cfg.LeaseTTL)
	return e.handBack(ctx, func(row *rivertype.JobRow) bool {
		if len(row.AttemptedBy) == 0 || row.AttemptedAt == nil || row.AttemptedAt.After(before) {
			return false
		}
		return !live[row.AttemptedBy[len(row.AttemptedBy)-1]]
	})
}

// handBackBatch is how many running jobs handBack lists at a time.
const handBackBatch = 1000

// handBack makes the running jobs that take accepts (all when nil)
// available again, their attempts kept, through River's client (JobList)
// and driver (the state change River's own producer makes when a job
// ends: only while the job is still running).
func (e *River[TTx]) handBack(ctx context.Context, take func(*rivertype.JobRow) bool) (int, error) {
	n := 0
	params := river.NewJobListParams().States(rivertype.JobStateRunning).First(handBackBatch)
	for {
		res, err := e.client.JobList(ctx, params)
		if err != nil {
			return n, err
		}
		if len(res.Jobs) == 0 {
			return n, nil
		}
		listed := len(res.Jobs)
		rows := res.Jobs
		if take != nil {
			rows = nil
			for _, row := range res.Jobs {
				if take(row) {
					rows = append(rows, row)
				}
			}
		}
		if len(rows) == 0 {
			if listed < handBackBatch {
				return n, nil
			}
			params = params.After(res.LastCursor)
			continue
		}
		k := len(rows)
		p := &riverdriver.JobSetStateIfRunningManyParams{
			ID: make([]int64, k), Attempt: make([]*int, k), ErrData: make([][]byte, k), FinalizedAt: make([]*time.Time, k),
			MetadataDoMerge: make([]bool, k), MetadataUpdates: make([][]byte, k), ScheduledAt: make([]*time.Time, k),
			State: make([]rivertype.JobState, k), Schema: e.client.Schema(),
		}
		for i, row := range rows {
			p.ID[i], p.MetadataUpdates[i], p.State[i] = row.ID, []byte("{}"), rivertype.JobStateAvailable
		}
		if _, err := e.driver.GetExecutor().JobSetStateIfRunningMany(ctx, p); err != nil {
			return n, err
		}
		n += k
		if listed < handBackBatch {
			return n, nil
		}
		params = params.After(res.LastCursor)
	}
}

// InsertTx implements imprint.JobEngine: it enqueues j inside tx (a
// transaction of the store the driver runs on) with River's InsertTx. With
// j.UniqueKey set it inserts nothing when an unfinished (available,
// scheduled, pending, running or retryable) job of the kind holds the key,
// and returns that job and false: River's unique jobs by the UniqueKey
// arg. RunAt in the future schedules the job; MaxAttempts <= 0 takes
// Config.MaxAttempts.
func (e *River[TTx]) InsertTx(ctx context.Context, tx TTx, j imprint.Job) (imprint.Job, bool, error) {
	args, err := riverArgsFor(j)
	if err != nil {
		return j, false, err
	}
	opts := &river.InsertOpts{MaxAttempts: j.MaxAttempts, Priority: jobPriority(j.Kind)}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = e.cfg.MaxAttempts
	}
	if !j.RunAt.IsZero() && j.RunAt.Time.After(time.Now()) {
		opts.ScheduledAt = j.RunAt.Time
	}
	var holderKey string
	if j.UniqueKey != "" {
		opts.UniqueOpts = river.UniqueOpts{ByArgs: true, ByState: unfinishedStates}
		// River's SQLite driver parses its insert statement anew on every
		// call: when the job last seen holding the key still holds it
		// (read by id with River's JobGetTx, in tx), return it instead.
		holderKey = string(j.Kind) + "\x00" + j.UniqueKey
		if id, ok := e.holder(holderKey); ok {
			if old, held := e.holderOf(ctx, tx, id, j); held {
				return old, false, nil
			}
			e.setHolder(holderKey, 0)
		}
	}
	res, err := e.client.InsertTx(ctx, tx, args, opts)
	if err != nil {
		return j, false, fmt.Errorf("river insert: %w", err)
	}
	out, err := jobFromRow(res.Job)
	if err != nil {
		return j, false, err
	}
	if holderKey != "" {
		e.setHolder(holderKey, out.ID)
	}
	return out, !res.UniqueSkippedAsDuplicate, nil
}

// jobPriority is the River priority (1 runs first) of a job of kind k.
// An extraction is a chain of LLM calls made one after another (each
// window an extraction call, then a dedup call), one job per session; a
// capture, one episode's scoring. Taking the long chains first (longest
// first) keeps one from being left to run alone at the end of a burst,
// with the other workers idle, while short captures fill the gaps.
func jobPriority(k imprint.JobKind) int {
	if k == imprint.JobExtract {
		return 1
	}
	return 2
}

// holderOf returns job id, read in tx, when it is an unfinished job of j's
// kind and unique key. The id may be stale (the job ended, or the
// transaction that inserted it rolled back and another job took the id):
// then it reports false and the caller inserts.
func (e *River[TTx]) holderOf(ctx context.Context, tx TTx, id int64, j imprint.Job) (imprint.Job, bool) {
	row, err := e.client.JobGetTx(ctx, tx, id)
	if err != nil {
		return imprint.Job{}, false
	}
	return holds(row, j)
}

// holds returns row as a job when it is an unfinished job of j's kind and
// unique key.
func holds(row *rivertype.JobRow, j imprint.Job) (imprint.Job, bool) {
	if row == nil || row.Kind != string(j.Kind) || !slices.Contains(unfinishedStates, row.State) {
		return imprint.Job{}, false
	}
	old, err := jobFromRow(row)
	if err != nil || old.UniqueKey != j.UniqueKey {
		return imprint.Job{}, false
	}
	return old, true
}

// unfinishedStates are River's states of a job that has not ended: a job
// in one of them holds its unique key.
var unfinishedStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled,
}

// riverArgsFor returns the River args of j's kind.
func riverArgsFor(j imprint.Job) (river.JobArgs, error) {
	f := jobFields{Tenant: j.Scope.Tenant, User: j.Scope.User, Agent: j.Scope.Agent,
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

// riverStates maps each imprint job state to the River states it may
// hold (jobFromRow decides between available and retryable).
var riverStates = map[imprint.JobState][]rivertype.JobState{
	imprint.JobAvailable: {rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateScheduled},
	imprint.JobRunning:   {rivertype.JobStateRunning},
	imprint.JobRetryable: {rivertype.JobStateRetryable, rivertype.JobStateAvailable},
	imprint.JobFailed:    {rivertype.JobStateDiscarded, rivertype.JobStateCancelled},
	imprint.JobCompleted: {rivertype.JobStateCompleted},
}

// jobState maps a River state to imprint's (for a job with no error).
func jobState(s rivertype.JobState) imprint.JobState {
	switch s {
	case rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateScheduled:
		return imprint.JobAvailable
	case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
		return imprint.JobFailed
	}
	return imprint.JobState(s)
}

// listPage is how many jobs one JobList call of JobStats and ListJobs reads.
const listPage = 1000

// eachJob calls fn, newest first, with every River job in states that
// belongs to scope (all scopes when nil), as imprint jobs, until fn returns
// false. It pages through River's JobList; River has no filter on args, so
// the scope is checked here.
func (e *River[TTx]) eachJob(ctx context.Context, scope *imprint.Scope, states []rivertype.JobState, fn func(imprint.Job) bool) error {
	params := river.NewJobListParams().States(states...).OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(listPage)
	for {
		res, err := e.client.JobList(ctx, params)
		if err != nil {
			return err
		}
		for _, row := range res.Jobs {
			j, err := jobFromRow(row)
			if err != nil {
				return err
			}
			if scope != nil && (j.Scope.Tenant != scope.Tenant || j.Scope.User != scope.User || j.Scope.Agent != scope.Agent) {
				continue
			}
			if !fn(j) {
				return nil
			}
		}
		if len(res.Jobs) < listPage {
			return nil
		}
		params = params.After(res.LastCursor)
	}
}

// JobStats implements imprint.JobEngine: it counts River's jobs of the
// scope (tenant, user and agent, as the store scopes; all scopes when nil)
// as imprint.JobStore.JobStats: scheduled and pending jobs count as
// available, discarded and cancelled ones as failed, an available job that
// failed before as retryable.
func (e *River[TTx]) JobStats(ctx context.Context, scope *imprint.Scope) (imprint.JobStats, error) {
	var st imprint.JobStats
	states := append(append([]rivertype.JobState{}, unfinishedStates...), rivertype.JobStateDiscarded, rivertype.JobStateCancelled)
	err := e.eachJob(ctx, scope, states, func(j imprint.Job) bool {
		st.Add(j.State, 1)
		return true
	})
	if err != nil {
		return imprint.JobStats{}, fmt.Errorf("river job stats: %w", err)
	}
	return st, nil
}

// ListJobs implements imprint.JobEngine: it returns up to limit (100 when
// <= 0) River jobs of the scope (all scopes when nil) in state, newest
// first, with the last error of each; UpdatedAt is when the job finished
// or was last attempted. ErrInvalid for an unknown state.
func (e *River[TTx]) ListJobs(ctx context.Context, scope *imprint.Scope, state imprint.JobState, limit int) ([]imprint.Job, error) {
	states, ok := riverStates[state]
	if !ok {
		return nil, imprint.Invalidf("job state %q is not available, running, retryable, failed or completed", state)
	}
	if limit <= 0 {
		limit = 100
	}
	out := []imprint.Job{}
	err := e.eachJob(ctx, scope, states, func(j imprint.Job) bool {
		if j.State == state {
			out = append(out, j)
		}
		return len(out) < limit
	})
	if err != nil {
		return nil, fmt.Errorf("river list jobs: %w", err)
	}
	return out, nil
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
	j := imprint.Job{ID: row.ID, Kind: imprint.JobKind(row.Kind), State: jobState(row.State),
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
func (e *River[TTx]) work(ctx context.Context, row *rivertype.JobRow) error {
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
		e.complete(ctx, row)
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

// complete records job row completed now. River's completer records
// completions in batches, up to 250 ms after the handler returned; until
// then the job would still count as running (JobStats, a drain waiting on
// it) and hold its unique key, so an extraction enqueued meanwhile for
// the session would join a job that has ended instead of queueing one.
// The completer's own update afterwards changes nothing (it only updates a
// running job). A failure is only logged: the completer still records it.
func (e *River[TTx]) complete(ctx context.Context, row *rivertype.JobRow) {
	c := riverdriver.JobSetStateCompleted(row.ID, time.Now(), nil)
	_, err := e.driver.GetExecutor().JobSetStateIfRunningMany(ctx, &riverdriver.JobSetStateIfRunningManyParams{
		ID: []int64{c.ID}, Attempt: []*int{c.Attempt}, ErrData: [][]byte{c.ErrData}, FinalizedAt: []*time.Time{c.FinalizedAt},
		MetadataDoMerge: []bool{false}, MetadataUpdates: [][]byte{[]byte("{}")}, ScheduledAt: []*time.Time{c.ScheduledAt},
		State: []rivertype.JobState{c.State}, Schema: e.client.Schema(),
	})
	if err != nil && ctx.Err() == nil {
		e.log.Warn("job completion not recorded at once; river records it later", "job_id", row.ID, "error", err)
	}
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
	SessionID string `json:"session_id,omitempty"`
	EpisodeID string `json:"episode_id,omitempty"`
	UniqueKey string `json:"unique_key,omitempty" river:"unique"`
}

func (f jobFields) fill(j *imprint.Job) {
	j.Scope = imprint.Scope{Tenant: f.Tenant, User: f.User, Agent: f.Agent}
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
type riverWorker[K jobKind, TTx any] struct {
	river.WorkerDefaults[riverArgs[K]]
	e *River[TTx]
}

// Work implements river.Worker.
func (w *riverWorker[K, TTx]) Work(ctx context.Context, job *river.Job[riverArgs[K]]) error {
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
