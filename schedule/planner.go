package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// DefaultExtractIdle is how long a session with pending messages stays
// quiet before it is extracted (extraction.idle).
const DefaultExtractIdle = 10 * time.Minute

// DefaultPlanEvery is how often Planner.Run ticks when not told.
const DefaultPlanEvery = 15 * time.Second

// planBatch caps the sessions one tick enqueues; the rest come next tick.
const planBatch = 500

// Planner decides when background work is due. Each Tick finalizes idle
// episodes (through Manager) and enqueues one extraction job per session
// that is due (every_n_rounds reached) or has pending messages and has
// been quiet for ExtractIdle. Jobs are unique per session, so ticking
// again never queues a second one.
type Planner struct {
	Store imprint.ServiceStore
	// Scheduler enqueues the extraction jobs (the table Scheduler or
	// River); nil enqueues straight into Store.
	Scheduler Engine
	// Manager finalizes idle episodes (*session.Manager); nil skips that
	// step.
	Manager IdleFinalizer
	// ExtractIdle defaults to DefaultExtractIdle.
	ExtractIdle time.Duration
	// EpisodeIdle, when positive, overrides the Manager's idle time;
	// negative turns idle finalization off.
	EpisodeIdle time.Duration
	Logger      *slog.Logger
}

// IdleFinalizer finalizes the episodes of live sessions that went quiet
// (*session.Manager, which cmd injects: schedule imports no pipeline).
type IdleFinalizer interface {
	// EpisodeIdle is how long an episode stays open without a turn.
	EpisodeIdle() time.Duration
	// FinalizeIdle finalizes the episodes idle for EpisodeIdle before now
	// and returns how many it finalized.
	FinalizeIdle(ctx context.Context, now time.Time) (int, error)
}

// Tick does one round of planning at now: idle episodes are finalized
// (their capture jobs enqueued with them) and sessions to extract get an
// extraction job. Failures of one step do not stop the other; they are
// returned joined.
func (p *Planner) Tick(ctx context.Context, now time.Time) error {
	if p.Store == nil {
		return errNoStore
	}
	var errs []error
	if p.Manager != nil && p.EpisodeIdle >= 0 {
		at := now
		if p.EpisodeIdle > 0 {
			// FinalizeIdle closes episodes idle for the Manager's time
			// before at; shift at so the cutoff is now - EpisodeIdle.
			at = now.Add(p.Manager.EpisodeIdle() - p.EpisodeIdle)
		}
		if n, err := p.Manager.FinalizeIdle(ctx, at); err != nil {
			errs = append(errs, err)
		} else if n > 0 {
			p.logger().Info("idle episodes finalized", "episodes", n)
		}
	}
	idle := p.ExtractIdle
	if idle <= 0 {
		idle = DefaultExtractIdle
	}
	listedAt := time.Now()
	sessions, err := p.Store.SessionsToExtract(ctx, now.Add(-idle), planBatch)
	if err != nil {
		errs = append(errs, fmt.Errorf("plan extraction: %w", err))
		return errors.Join(errs...)
	}
	queued := 0
	for _, s := range sessions {
		j := imprint.Job{Kind: imprint.JobExtract, Scope: s.Scope, SessionID: s.ID}
		var err error
		if le, ok := p.Scheduler.(listedEnqueuer); ok {
			_, err = le.EnqueueListed(ctx, j, listedAt)
		} else if p.Scheduler != nil {
			_, err = p.Scheduler.Enqueue(ctx, j)
		} else {
			j.UniqueKey = imprint.ExtractJobKey(s.Scope, s.ID)
			_, _, err = p.Store.EnqueueJob(ctx, j)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("plan extraction of session %s: %w", s.ID, err))
			continue
		}
		queued++
	}
	if queued > 0 {
		p.logger().Debug("extraction planned", "sessions", queued)
	}
	return errors.Join(errs...)
}

// listedEnqueuer is an engine that can tell a session listed as pending
// before its extraction job ended from one still pending (River).
type listedEnqueuer interface {
	EnqueueListed(ctx context.Context, j imprint.Job, listedAt time.Time) (imprint.Job, error)
}

// Run ticks at once and then every interval (DefaultPlanEvery when <= 0)
// until ctx ends, logging failed ticks, and returns nil.
func (p *Planner) Run(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		every = DefaultPlanEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := p.Tick(ctx, time.Now()); err != nil && ctx.Err() == nil {
			p.logger().Warn("planning failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (p *Planner) logger() *slog.Logger {
	if p.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Logger
}
