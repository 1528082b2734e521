package node

import (
	"context"
	"net"

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

// mcpVersion is the server version reported to MCP hosts.
const mcpVersion = "dev"

// ServeHooks are what imprint serve tells its user; nil ones are skipped.
type ServeHooks struct {
	// Listening is called once the address is bound and the serve lock
	// taken, before the first request is served.
	Listening func(addr net.Addr)
	// Stopping is called when ctx is cancelled, before the shutdown.
	Stopping func()
}

// Serve runs imprint serve until ctx is cancelled (SIGINT or SIGTERM): the
// HTTP API (with the MCP server at /mcp and the viewer at /), the session
// manager, the durable jobs of capture, extraction and embedding and the
// planner, over the node's store. ErrInvalid for an address that needs a
// token it does not have, or a store that keeps no durable jobs.
func (n *Node) Serve(ctx context.Context, h ServeHooks) error {
	cfg := n.Config
	// The address first, before the store is opened; whether it may be
	// served without the admin token depends on the store's keys.
	if err := cfg.CheckServe(func() (bool, error) { return true, nil }); err != nil {
		return err
	}
	n.UseClock(ctx)
	st, err := n.Store(ctx)
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
	rec, err := n.Recorder(ctx)
	if err != nil {
		return err
	}
	// The capture runner announces its runs on the event stream.
	var srv *httpapi.Server
	capRunner, err := n.capture(ctx, imprint.PublisherFunc(func(ctx context.Context, e imprint.Event) { srv.Publish(ctx, e) }))
	if err != nil {
		return err
	}
	extRunner, err := n.Extract(ctx)
	if err != nil {
		return err
	}
	searcher, err := n.Searcher(ctx)
	if err != nil {
		return err
	}
	mems, err := n.Memories(ctx, extRunner)
	if err != nil {
		return err
	}

	m, err := n.LLM()
	if err != nil {
		return err
	}
	workers := ingest.JobWorkers(m != nil, cfg.LLM.Concurrency)
	sched, err := n.JobEngine(ctx, svc, schedule.Config{Workers: workers, BudgetRecheck: n.budgetRecheck()})
	if err != nil {
		return err
	}
	// After the job engine's migrations, before the address is served.
	n.warmStore(ctx, svc)
	emb, err := n.Embedder()
	if err != nil {
		return err
	}
	due := &ingest.Due{Jobs: sched, Embedding: emb != nil, Logger: n.Logger}
	turns := &ingest.TurnRecorder{Recorder: rec, Ingest: due}
	// Closed episodes reach the event stream (episode.finalized, with the
	// episode's scope); their capture is the durable job enqueued in the
	// same transaction (docs/CONTRACTS.md §8).
	recall := search.Recaller{Searcher: searcher, Memories: svc, Traces: svc, Messages: svc}
	web, err := viewer.New(viewer.Deps{Store: svc, Search: searcher, Recall: recall, Memories: mems, Logger: n.Logger})
	if err != nil {
		return err
	}
	episodes := imprint.PublisherFunc(func(ctx context.Context, e imprint.Event) {
		if e.Type == imprint.EventEpisodeFinalized {
			srv.Publish(ctx, e)
		}
	})
	mgr := session.NewManager(session.ManagerDeps{Store: svc, Events: episodes, Recorder: turns, Logger: n.Logger, Wake: sched.Wake,
		Redact: redact.String, Ingest: due},
		session.ManagerConfig{EpisodeIdle: cfg.Session.EpisodeIdle})
	mcpSrv, err := mcp.New(mcp.Deps{Store: svc, Search: searcher, Recall: recall, Recorder: rec, Ingest: due,
		Sessions: mcp.Queued(mgr), Memories: mems, Logger: n.Logger}, mcp.Config{Version: mcpVersion})
	if err != nil {
		return err
	}
	srv = httpapi.NewServer(httpapi.Deps{
		Store: svc, Recorder: rec, Ingest: due, Sessions: mgr, Jobs: sched, Search: searcher, Calls: n.LLMCalls(), Logger: n.Logger,
		Recall:   recall,
		Memories: mems,
		Redact:   redact.String,
		Budget:   n.LLMBudget(),
		Viewer:   web,
		MCP:      mcpSrv.Handler(),
	}, httpapi.Config{Token: cfg.Server.APIToken, RequestTimeout: cfg.Server.RequestTimeout, MaxBodyBytes: httpapi.DefaultMaxBodyBytes,
		AllowedHosts: cfg.Server.AllowedHosts, MaxTurnsPerRequest: cfg.Server.MaxTurnsPerRequest})
	defer srv.Close()
	turns.Count = srv.CountRecorded

	w := &ingest.Workers{Store: svc, Capture: capRunner, Extract: extRunner, Events: srv,
		Embedder: emb, EmbedTraces: cfg.Capture.EmbedTraces, Due: due, Logger: n.Logger}
	sched.Handle(imprint.JobCapture, w.CaptureJob)
	sched.Handle(imprint.JobExtract, w.ExtractJob)
	sched.Handle(imprint.JobEmbed, w.EmbedJob)
	planner := &schedule.Planner{Store: svc, Scheduler: sched, Manager: mgr,
		ExtractIdle: cfg.Extraction.Idle, EpisodeIdle: cfg.Session.EpisodeIdle, Logger: n.Logger}

	listened := false
	releaseServe := func() {}
	service := &ingest.Service{Addr: cfg.Server.Addr, Handler: srv, IdleTimeout: cfg.Server.IdleTimeout, CloseStreams: srv.Close, Logger: n.Logger,
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
				n.Logger.Warn("serve lock not held", "error", err.Error())
			} else {
				releaseServe = release
			}
			if h.Listening != nil {
				h.Listening(addr)
			}
			n.Logger.Info("serve started", "addr", addr.String(), "data_dir", cfg.DataDir, "jobs_engine", cfg.Jobs.Engine)
		},
		Stopping: h.Stopping,
	}
	err = service.Run(ctx)
	releaseServe()
	if listened {
		n.Logger.Info("serve stopped")
	}
	return err
}
