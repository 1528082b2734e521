package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/imprint-dev/imprint"
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

// PlanEvery is how often the planner runs for the given idle times.
func PlanEvery(extractIdle, episodeIdle time.Duration) time.Duration {
	d := min(extractIdle, episodeIdle) / 4
	return min(max(d, minPlanEvery), maxPlanEvery)
}

// JobWorkers is how many job workers imprint serve runs. Without an LLM,
// jobs are CPU work (heuristic extraction, embedding), so one worker leaves
// the other core to the requests agents are waiting on. With one, jobs
// mostly wait on the LLM: two workers per call that may be in flight
// (llmConcurrency, at least 2), because a job does store work before and
// after its calls (reading the episode or the window, writing the trace or
// the memories): a capture's 200 ms call came with 65–105 ms of store work
// at the medians and ~260 ms at p90 on a loaded machine, and with fewer
// workers the LLM slots idled meanwhile though other jobs waited. The LLM
// client's concurrency still caps the calls in flight; a node holds at
// most llmConcurrency jobs waiting for its slots that another node could
// run.
func JobWorkers(hasLLM bool, llmConcurrency int) int {
	if !hasLLM {
		return 1
	}
	return 2 * max(2, llmConcurrency)
}

// Service is the lifecycle of imprint serve: the HTTP server and the
// background work (job workers, planner) run together, and a stop first
// closes the door to new requests and only then hands back the jobs in
// flight.
type Service struct {
	// Addr is the TCP address to listen on.
	Addr string
	// Handler serves the requests.
	Handler http.Handler
	// IdleTimeout bounds keep-alive connections.
	IdleTimeout time.Duration
	// Background runs until its context ends; one that returns early stops
	// the service.
	Background []func(ctx context.Context) error
	// CloseStreams ends the event streams, which a graceful shutdown would
	// wait for.
	CloseStreams func()
	// Listening, if set, is called once the listener is open; Stopping
	// once the service begins to stop.
	Listening func(addr net.Addr)
	Stopping  func()
	Logger    *slog.Logger
}

// Run serves until ctx is cancelled, the server fails, or the background
// work stops. ErrUnavailable when Addr cannot be listened on.
func (s *Service) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w: %v", s.Addr, imprint.ErrUnavailable, err)
	}
	hs := &http.Server{Handler: s.Handler, ReadHeaderTimeout: serveReadHeaderTimeout, IdleTimeout: s.IdleTimeout, ErrorLog: nil}
	if s.Listening != nil {
		s.Listening(ln.Addr())
	}

	// Background work runs on its own context so that a stop first closes
	// the door to new requests and only then hands back the jobs in flight.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	g, gctx := errgroup.WithContext(workCtx)
	for _, run := range s.Background {
		g.Go(func() error { return run(gctx) })
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()

	var failure error
	served := false // serveErr was read: the Serve goroutine has returned
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		served = true
		if !errors.Is(err, http.ErrServerClosed) {
			failure = fmt.Errorf("serve: %w", err)
		}
	case <-gctx.Done():
		failure = errors.New("serve: background workers stopped")
	}
	if s.Stopping != nil {
		s.Stopping()
	}
	if s.CloseStreams != nil {
		s.CloseStreams()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serveShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		s.Logger.Warn("serve: requests still open at shutdown were closed", "error", err)
		_ = hs.Close()
	}
	if !served {
		<-serveErr // Serve returns once Shutdown or Close ran
	}
	stopWork()
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) && failure == nil {
		failure = fmt.Errorf("serve: %w", err)
	}
	return failure
}
