package main

import (
	"context"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/mcp"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/schedule"
	"github.com/imprint-dev/imprint/search"
	"github.com/imprint-dev/imprint/session"
	"github.com/imprint-dev/imprint/viewer"
)

func newServeCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT]",
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
	a.configFlag(cmd, "addr", "server.addr", "address to listen on, e.g. 127.0.0.1:8420 or :8420")
	return cmd
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
	if err := cfg.CheckServe(func() (bool, error) { return svc.HasAPIKeys(ctx) }); err != nil {
		return err
	}
	rec, err := a.l0Recorder(ctx)
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
	mems, err := a.localMemories(ctx, extRunner)
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
	emb, err := a.Embedder()
	if err != nil {
		return err
	}
	due := &ingest.Due{Jobs: sched, Embedding: emb != nil, Logger: a.Logger}
	turns := &ingest.TurnRecorder{Recorder: rec, Ingest: due}
	// Closed episodes reach the event stream (episode.finalized, with the
	// episode's scope); their capture is the durable job enqueued in the
	// same transaction (docs/CONTRACTS.md §8).
	recall := search.Recaller{Searcher: searcher, Memories: svc, Traces: svc, Messages: svc}
	web, err := viewer.New(viewer.Deps{Store: svc, Search: searcher, Recall: recall, Memories: mems, Logger: a.Logger})
	if err != nil {
		return err
	}
	var srv *httpapi.Server
	episodes := imprint.PublisherFunc(func(ctx context.Context, e imprint.Event) {
		if e.Type == imprint.EventEpisodeFinalized {
			srv.Publish(ctx, e)
		}
	})
	mgr := session.NewManager(session.ManagerDeps{Store: svc, Events: episodes, Recorder: turns, Logger: a.Logger, Wake: sched.Wake,
		Redact: redact.String, Ingest: due},
		session.ManagerConfig{EpisodeIdle: cfg.Session.EpisodeIdle})
	mcpSrv, err := mcp.New(mcp.Deps{Store: svc, Search: searcher, Recall: recall, Recorder: rec, Ingest: due,
		Sessions: mcp.Queued(mgr), Memories: mems, Logger: a.Logger}, mcp.Config{Version: version})
	if err != nil {
		return err
	}
	srv = httpapi.NewServer(httpapi.Deps{
		Store: svc, Recorder: rec, Ingest: due, Sessions: mgr, Jobs: sched, Search: searcher, Calls: a.LLMCalls(), Logger: a.Logger,
		Recall:   recall,
		Memories: mems,
		Redact:   redact.String,
		Budget:   a.LLMBudget(),
		Viewer:   web,
		MCP:      mcpSrv.Handler(),
	}, httpapi.Config{Token: cfg.Server.APIToken, RequestTimeout: cfg.Server.RequestTimeout, MaxBodyBytes: httpapi.DefaultMaxBodyBytes,
		AllowedHosts: cfg.Server.AllowedHosts, MaxTurnsPerRequest: cfg.Server.MaxTurnsPerRequest})
	defer srv.Close()
	turns.Count = srv.CountRecorded

	w := &ingest.Workers{Store: svc, Capture: capRunner, Extract: extRunner, Events: srv,
		Embedder: emb, EmbedTraces: cfg.Capture.EmbedTraces, Due: due, Logger: a.Logger}
	sched.Handle(imprint.JobCapture, w.CaptureJob)
	sched.Handle(imprint.JobExtract, w.ExtractJob)
	sched.Handle(imprint.JobEmbed, w.EmbedJob)
	planner := &schedule.Planner{Store: svc, Scheduler: sched, Manager: mgr,
		ExtractIdle: cfg.Extraction.Idle, EpisodeIdle: cfg.Session.EpisodeIdle, Logger: a.Logger}

	listened := false
	releaseServe := func() {}
	service := &ingest.Service{Addr: cfg.Server.Addr, Handler: srv, IdleTimeout: cfg.Server.IdleTimeout, CloseStreams: srv.Close, Logger: a.Logger,
		Background: []func(context.Context) error{
			sched.Run,
			func(ctx context.Context) error {
				return planner.Run(ctx, ingest.PlanEvery(cfg.Extraction.Idle, cfg.Session.EpisodeIdle))
			},
		},
		Listening: func(addr net.Addr) {
			listened = true
			// Commands that must not write the data dir's files beside
			// this process (a purge) find it here and use its API.
			if release, err := ingest.HoldServe(cfg.DataDir, "http://"+addr.String()); err != nil {
				a.Logger.Warn("serve lock not held", "error", err.Error())
			} else {
				releaseServe = release
			}
			if w := cfg.HostsWarning(); w != "" {
				fmt.Fprintf(a.Stderr, "imprint: warning: %s\n", w)
			}
			fmt.Fprintf(a.Stderr, "imprint: listening on http://%s\n", addr)
			a.Logger.Info("serve started", "addr", addr.String(), "data_dir", cfg.DataDir, "jobs_engine", cfg.Jobs.Engine)
		},
		Stopping: func() { fmt.Fprintln(a.Stderr, "imprint: stopping") },
	}
	err = service.Run(ctx)
	releaseServe()
	if listened {
		a.Logger.Info("serve stopped")
	}
	return err
}
