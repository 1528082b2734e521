package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/schedule"
	"github.com/imprint-dev/imprint/session"
)

// Serve timing that is not configuration.
const (
	// serveReadHeaderTimeout bounds how long a client may take to send its
	// request headers.
	serveReadHeaderTimeout = 10 * time.Second
	// serveShutdownTimeout bounds how long a graceful stop waits for
	// requests in progress before closing their connections.
	serveShutdownTimeout = 15 * time.Second
	// planner intervals: the planner looks for idle episodes and sessions
	// due for extraction this often (a quarter of the shorter idle time,
	// within these bounds).
	minPlanEvery = 200 * time.Millisecond
	maxPlanEvery = 30 * time.Second
)

func newServeCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP API and the background workers (capture, extraction)",
		Long: "serve listens on server.addr (default 127.0.0.1:8420) and runs the durable background\n" +
			"jobs: capture of finalized episodes and extraction of sessions (after\n" +
			"extraction.every_n_rounds user rounds, extraction.idle of silence, or a session end).\n" +
			"A non-loopback address needs server.api_token or an API key (imprint keys). SIGINT or\n" +
			"SIGTERM stop it gracefully: no new requests, jobs in flight handed back for the next\n" +
			"start, exit 0. It prints the address it listens on to stderr.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context())
		},
	}
}

// turnRecorder records the text turns of live sessions as L0 messages,
// counts them for /metrics and, when the session reached
// extraction.every_n_rounds, queues its extraction at once.
type turnRecorder struct {
	r *record.Recorder
	// count and enqueue are set once the server and scheduler exist; nil
	// skips them.
	count   func(n int)
	enqueue func(ctx context.Context, j imprint.Job) (imprint.Job, error)
	log     *slog.Logger
	// embedding is set when an embedder is configured, so a message
	// without a vector is worth an embedding retry.
	embedding bool
}

// RecordTurns implements session.TurnRecorder.
func (t *turnRecorder) RecordTurns(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) error {
	res, err := t.r.Record(ctx, scope, sessionID, msgs)
	if err != nil {
		return fmt.Errorf("record turns: %w", err)
	}
	if t.count != nil {
		t.count(res.RecordedCount)
	}
	t.retryEmbed(ctx, scope, res)
	if res.SchedulerNotified && t.enqueue != nil {
		// The messages are recorded; a failed enqueue leaves the session
		// marked due for the planner.
		if _, err := t.enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: sessionID,
			UniqueKey: imprint.ExtractJobKey(scope, sessionID)}); err != nil && t.log != nil {
			t.log.Warn("queue extraction of a due session failed", "session_id", sessionID, "error", err)
		}
	}
	return nil
}

// retryEmbed queues the scope's embedding retry when recorded messages got
// no vector while an embedder is configured.
func (t *turnRecorder) retryEmbed(ctx context.Context, scope imprint.Scope, res record.Result) {
	if t.embedding && res.VectorsWritten < res.RecordedCount {
		queueEmbedRetry(ctx, t.enqueue, t.log, scope)
	}
}

// messageRecorder is the recorder of POST /v1/messages: the L0 recorder
// plus the embedding retry of messages that got no vector.
type messageRecorder struct{ t *turnRecorder }

// Record implements httpapi.Recorder.
func (m messageRecorder) Record(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) (record.Result, error) {
	res, err := m.t.r.Record(ctx, scope, sessionID, msgs)
	if err != nil {
		return res, err
	}
	m.t.retryEmbed(ctx, scope, res)
	return res, nil
}

// queueEmbedRetry enqueues the embedding retry job of scope (one unfinished
// per scope). A failure is logged: the records are stored either way.
func queueEmbedRetry(ctx context.Context, enqueue func(context.Context, imprint.Job) (imprint.Job, error), log *slog.Logger, scope imprint.Scope) {
	if enqueue == nil {
		return
	}
	if _, err := enqueue(ctx, imprint.Job{Kind: imprint.JobEmbed, Scope: scope, UniqueKey: imprint.EmbedJobKey(scope)}); err != nil && log != nil {
		log.Warn("queue embedding retry failed", "scope", scope.String(), "error", err)
	}
}

// serve runs imprint serve until ctx is cancelled (SIGINT or SIGTERM).
func (a *App) serve(ctx context.Context) error {
	cfg := a.Config
	// The address first, before the store is opened; whether it may be
	// served without the admin token depends on the store's keys.
	if err := cfg.CheckServe(func() (bool, error) { return true, nil }); err != nil {
		return err
	}
	a.useClock(ctx)
	st, err := a.Store(ctx)
	if err != nil {
		return err
	}
	svc, ok := st.(imprint.ServiceStore)
	if !ok {
		return imprint.Invalidf("config store: the %s store cannot run imprint serve (no durable jobs)", cfg.Store)
	}
	rec, err := a.l0Recorder(ctx)
	if err := cfg.CheckServe(func() (bool, error) { return svc.HasAPIKeys(ctx) }); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	capRunner, err := a.captureRunner(ctx)
	if err != nil {
		return err
	}
	extRunner, err := a.extractRunner(ctx)
	if err != nil {
		return err
	}
	searcher, err := a.searcher(ctx)
	if err != nil {
		return err
	}

	// With an LLM, as many workers as LLM calls may run at once: jobs
	// mostly wait on the LLM. Without one, jobs are CPU work (heuristic
	// extraction, embedding), so one worker leaves the other core to the
	// requests agents are waiting on.
	workers := max(2, cfg.LLM.Concurrency)
	if m, err := a.LLM(); err == nil && m == nil {
		workers = 1
	}
	sched, err := a.jobEngine(ctx, svc, schedule.Config{Workers: workers, BudgetRecheck: a.budgetRecheck()})
	if err != nil {
		return err
	}
	bus := session.NewBus(a.Logger)
	emb, err := a.Embedder()
	if err != nil {
		return err
	}
	turns := &turnRecorder{r: rec, enqueue: sched.Enqueue, log: a.Logger, embedding: emb != nil}
	mgr := session.NewManager(session.ManagerDeps{Store: svc, Bus: bus, Recorder: turns, Logger: a.Logger, Wake: sched.Wake,
		Redact: redact.String},
		session.ManagerConfig{EpisodeIdle: cfg.Session.EpisodeIdle})
	srv := httpapi.NewServer(httpapi.Deps{
		Store: svc, Recorder: messageRecorder{turns}, Sessions: mgr, Jobs: sched, Search: searcher, Calls: a.LLMCalls(), Logger: a.Logger,
		Redact: redact.String,
		Budget: a.LLMBudget(),
	}, httpapi.Config{Token: cfg.Server.APIToken, RequestTimeout: cfg.Server.RequestTimeout, MaxBodyBytes: httpapi.DefaultMaxBodyBytes,
		AllowedHosts: cfg.Server.AllowedHosts, MaxTurnsPerRequest: cfg.Server.MaxTurnsPerRequest})
	defer srv.Close()
	turns.count = srv.CountRecorded
	// Closed episodes reach the event stream; their capture is the
	// durable job enqueued in the same transaction (docs/CONTRACTS.md §8).
	defer bus.Subscribe(session.EventEpisodeFinalized, func(e session.Event) {
		srv.PublishScoped(e.Episode.Scope, session.EventEpisodeFinalized, episodeEvent{
			EpisodeID: e.Episode.ID, SessionID: e.Episode.SessionID, Status: string(e.Episode.Status),
			ClosedBy: string(e.ClosedBy), Turns: len(e.Episode.Turns),
		})
	})()

	w := &serveWorkers{store: svc, capture: capRunner, extract: extRunner, publish: srv.PublishScoped, a: a,
		embedder: emb, embedTraces: cfg.Capture.EmbedTraces, enqueue: sched.Enqueue}
	sched.Handle(imprint.JobCapture, w.captureJob)
	sched.Handle(imprint.JobExtract, w.extractJob)
	sched.Handle(imprint.JobEmbed, w.embedJob)
	planner := &schedule.Planner{Store: svc, Scheduler: sched, Manager: mgr,
		ExtractIdle: cfg.Extraction.Idle, EpisodeIdle: cfg.Session.EpisodeIdle, Logger: a.Logger}

	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w: %v", cfg.Server.Addr, imprint.ErrUnavailable, err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: serveReadHeaderTimeout, IdleTimeout: cfg.Server.IdleTimeout, ErrorLog: nil}
	if host, _, _ := net.SplitHostPort(cfg.Server.Addr); !isLoopback(host) && len(cfg.Server.AllowedHosts) == 0 {
		fmt.Fprintf(a.Stderr, "imprint: warning: server.allowed_hosts is empty: only requests naming localhost or an IP address of this server as their Host are served (421 for any other name); set %s to the names clients use\n", envName("server.allowed_hosts"))
	}
	fmt.Fprintf(a.Stderr, "imprint: listening on http://%s\n", ln.Addr())
	a.Logger.Info("serve started", "addr", ln.Addr().String(), "data_dir", cfg.DataDir, "jobs_engine", cfg.Jobs.Engine)

	// Workers run on their own context so that a stop first closes the
	// door to new requests and only then hands back the jobs in flight.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	g, gctx := errgroup.WithContext(workCtx)
	g.Go(func() error { return sched.Run(gctx) })
	g.Go(func() error { return planner.Run(gctx, planEvery(cfg.Extraction.Idle, cfg.Session.EpisodeIdle)) })
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()

	var failure error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		if !errors.Is(err, http.ErrServerClosed) {
			failure = fmt.Errorf("serve: %w", err)
		}
	case <-gctx.Done():
		failure = errors.New("serve: background workers stopped")
	}
	fmt.Fprintln(a.Stderr, "imprint: stopping")
	srv.Close() // ends event streams, which Shutdown would wait for
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serveShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		a.Logger.Warn("serve: requests still open at shutdown were closed", "error", err)
		_ = hs.Close()
	}
	stopWork()
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) && failure == nil {
		failure = fmt.Errorf("serve: %w", err)
	}
	a.Logger.Info("serve stopped")
	return failure
}

// planEvery is how often the planner runs for the given idle times.
func planEvery(extractIdle, episodeIdle time.Duration) time.Duration {
	d := min(extractIdle, episodeIdle) / 4
	return min(max(d, minPlanEvery), maxPlanEvery)
}

// serveWorkers are the job handlers of imprint serve.
type serveWorkers struct {
	store   imprint.ServiceStore
	capture *capture.Runner
	extract *extract.Runner
	publish func(scope imprint.Scope, name string, data any)
	a       *App
	// embedder fills in the vectors of records stored without one (nil:
	// embedding.provider none); embedTraces is capture.embed_traces.
	embedder    imprint.Embedder
	embedTraces bool
	enqueue     func(ctx context.Context, j imprint.Job) (imprint.Job, error)
}

// embedWarned reports whether warnings include a failed embedding.
func embedWarned[W any](ws []W, stage func(W) string) bool {
	for _, x := range ws {
		if stage(x) == "embed" {
			return true
		}
	}
	return false
}

// captureJob captures a closed episode. A missing episode completes the job
// (nothing to capture); a store failure returns an error so the job is
// retried; a refusal of the LLM budget returns it, and the job waits.
func (w *serveWorkers) captureJob(ctx context.Context, j imprint.Job) error {
	ep, err := w.store.GetEpisode(ctx, j.Scope, j.EpisodeID)
	if errors.Is(err, imprint.ErrNotFound) {
		w.a.Logger.Warn("capture job: episode is gone", "episode_id", j.EpisodeID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("capture %s: %w", j.EpisodeID, err)
	}
	if ep.Status == imprint.EpisodeOpen {
		return fmt.Errorf("capture %s: episode is still open", j.EpisodeID)
	}
	w.publish(j.Scope, capture.EventStarted, capture.Event{Kind: capture.EventStarted, EpisodeID: ep.ID, SessionID: ep.SessionID})
	res, err := w.capture.Run(ctx, ep, ep.ClosedBy)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, imprint.ErrLLMBudget) {
			w.publish(j.Scope, capture.EventFailed, capture.Event{Kind: capture.EventFailed, EpisodeID: ep.ID, SessionID: ep.SessionID, Stage: "persist", Err: err})
		}
		return fmt.Errorf("capture %s: %w", ep.ID, err)
	}
	w.publish(j.Scope, capture.EventDone, capture.Event{Kind: capture.EventDone, EpisodeID: ep.ID, SessionID: ep.SessionID, Result: &res})
	if w.embedder != nil && w.embedTraces && embedWarned(res.Warnings, func(x capture.Warning) string { return x.Stage }) {
		queueEmbedRetry(ctx, w.enqueue, w.a.Logger, j.Scope)
	}
	return nil
}

// Extraction event names on /v1/events.
const (
	eventExtractionDone   = "extraction.done"
	eventExtractionFailed = "extraction.failed"
)

// extractJob extracts the session's pending messages window after window.
// A failed window leaves its messages pending and fails the job, which is
// retried with backoff; a window the LLM budget refused makes the job wait.
func (w *serveWorkers) extractJob(ctx context.Context, j imprint.Job) error {
	embedFailed := false
	err := w.extract.ExtractPending(ctx, j.Scope, j.SessionID, func(res extract.Result) {
		embedFailed = embedFailed || embedWarned(res.Warnings, func(x extract.Warning) string { return x.Stage })
		if res.Success {
			w.publish(j.Scope, eventExtractionDone, res)
		} else if ctx.Err() == nil && !budgetRefused(res) {
			w.publish(j.Scope, eventExtractionFailed, res)
		}
	})
	if embedFailed && w.embedder != nil {
		queueEmbedRetry(context.WithoutCancel(ctx), w.enqueue, w.a.Logger, j.Scope)
	}
	if err != nil {
		return fmt.Errorf("extract session %s: %w", j.SessionID, err)
	}
	return nil
}

// budgetRefused reports whether a failed window stopped at the LLM budget:
// it waits, it did not fail.
func budgetRefused(res extract.Result) bool {
	for _, w := range res.Warnings {
		if w.Code == imprint.ErrorCode(imprint.ErrLLMBudget) {
			return true
		}
	}
	return false
}

// embedRetryBatch is how many records of a kind one embedding call of the
// retry job covers; embedRetryRounds bounds the batches of a kind per job.
const (
	embedRetryBatch  = 64
	embedRetryRounds = 50
)

// embedJob is the embedding retry job of a scope: it gives the messages,
// live memories and (with capture.embed_traces) traces of the scope that
// were stored without a vector their vectors, batch after batch. A failed
// embedding call fails the job, which is retried with backoff; the records
// stay stored either way. Records with no text to embed are left as they
// are.
func (w *serveWorkers) embedJob(ctx context.Context, j imprint.Job) error {
	st, ok := w.store.(embedRetryStore)
	if !ok || w.embedder == nil {
		w.a.Logger.Debug("embed job: nothing can re-embed here", "scope", j.Scope.String())
		return nil
	}
	n, err := embedRetry(ctx, st, w.embedder, j.Scope, w.embedTraces)
	if n > 0 {
		w.a.Logger.Info("embed job: vectors filled in", "scope", j.Scope.String(), "records", n)
	}
	if err != nil {
		return fmt.Errorf("embed retry of %s: %w", j.Scope.String(), err)
	}
	return nil
}

// embedRetryStore is what the embedding retry reads and writes.
type embedRetryStore interface {
	imprint.EmbedRetryStore
	SetMessageVectors(ctx context.Context, scope imprint.Scope, sessionID string, vecs map[string][]float32, embedder string) error
}

// embedRetry fills in the vectors of the scope's records that have none
// and returns how many records it embedded.
func embedRetry(ctx context.Context, st embedRetryStore, emb imprint.Embedder, scope imprint.Scope, traces bool) (int, error) {
	done := 0
	// Each kind: read a batch, embed its texts in one call, store; stop
	// when a batch is short or stored nothing new (records without text).
	for range embedRetryRounds {
		msgs, err := st.UnembeddedMessages(ctx, scope, embedRetryBatch)
		if err != nil || len(msgs) == 0 {
			if err != nil {
				return done, err
			}
			break
		}
		texts := make([]string, len(msgs))
		for i, m := range msgs {
			texts[i] = m.Content
		}
		vecs, err := embedTexts(ctx, emb, texts)
		if err != nil {
			return done, err
		}
		bySession := map[string]map[string][]float32{}
		for i, m := range msgs {
			if bySession[m.SessionID] == nil {
				bySession[m.SessionID] = map[string][]float32{}
			}
			bySession[m.SessionID][m.ID] = vecs[i]
		}
		for sid, vs := range bySession {
			if err := st.SetMessageVectors(ctx, scope, sid, vs, emb.Name()); err != nil {
				return done, err
			}
		}
		done += len(msgs)
		if len(msgs) < embedRetryBatch {
			break
		}
	}
	for range embedRetryRounds {
		mems, err := st.UnembeddedMemories(ctx, scope, embedRetryBatch)
		if err != nil || len(mems) == 0 {
			if err != nil {
				return done, err
			}
			break
		}
		texts := make([]string, len(mems))
		for i, m := range mems {
			texts[i] = m.Content
		}
		vecs, err := embedTexts(ctx, emb, texts)
		if err != nil {
			return done, err
		}
		for i, m := range mems {
			if err := st.SetMemoryVector(ctx, scope, m.ID, vecs[i], emb.Name()); err != nil {
				return done, err
			}
		}
		done += len(mems)
		if len(mems) < embedRetryBatch {
			break
		}
	}
	if !traces {
		return done, nil
	}
	for range embedRetryRounds {
		trs, err := st.UnembeddedTraces(ctx, scope, embedRetryBatch)
		if err != nil || len(trs) == 0 {
			if err != nil {
				return done, err
			}
			break
		}
		// The texts capture embeds: the step's state and its action.
		var texts []string
		type slot struct{ state, action int }
		slots := make([]slot, len(trs))
		for i, t := range trs {
			step := capture.Step{UserText: t.UserText, AgentText: t.AgentText, ToolCalls: t.ToolCalls}
			slots[i] = slot{-1, -1}
			if s := capture.StateText(step); s != "" {
				slots[i].state = len(texts)
				texts = append(texts, s)
			}
			if s := capture.ActionText(step); s != "" {
				slots[i].action = len(texts)
				texts = append(texts, s)
			}
		}
		if len(texts) == 0 {
			break
		}
		vecs, err := embedTexts(ctx, emb, texts)
		if err != nil {
			return done, err
		}
		stored := 0
		for i, t := range trs {
			var sum, act []float32
			if slots[i].state >= 0 {
				sum = vecs[slots[i].state]
			}
			if slots[i].action >= 0 {
				act = vecs[slots[i].action]
			}
			if len(sum) == 0 && len(act) == 0 {
				continue
			}
			if err := st.SetTraceVectors(ctx, scope, t.ID, sum, act, emb.Name()); err != nil {
				return done, err
			}
			stored++
		}
		done += stored
		if len(trs) < embedRetryBatch || stored == 0 {
			break
		}
	}
	return done, nil
}

// embedTexts embeds texts in one call and checks the count.
func embedTexts(ctx context.Context, emb imprint.Embedder, texts []string) ([][]float32, error) {
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed %d texts with %s: %w", len(texts), emb.Name(), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed %d texts with %s: got %d vectors", len(texts), emb.Name(), len(vecs))
	}
	return vecs, nil
}

// episodeEvent is the data of an episode.finalized server-sent event.
type episodeEvent struct {
	EpisodeID string `json:"episode_id"`
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
	ClosedBy  string `json:"closed_by"`
	Turns     int    `json:"turns"`
}
