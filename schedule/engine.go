package schedule

import (
	"context"

	imprint "github.com/imprint-dev/imprint"
)

// Engine runs imprint's durable jobs. Two engines implement it: Scheduler
// over an imprint.JobStore (the store's own jobs table) and River (River
// through the driver of the store's database). Register handlers and listeners before Run.
type Engine interface {
	// Handle registers h for jobs of kind.
	Handle(kind imprint.JobKind, h Handler)
	// OnEvent adds a listener told of every job outcome (EventDone,
	// EventRetry, EventFailed).
	OnEvent(fn func(name string, j imprint.Job, err error))
	// Enqueue stores j, with at most one unfinished job per UniqueKey (an
	// extraction job's defaults to imprint.ExtractJobKey); it returns the
	// stored job or the unfinished one that holds the key.
	Enqueue(ctx context.Context, j imprint.Job) (imprint.Job, error)
	// Wake asks the engine to look for due jobs now; engines that cannot
	// be woken ignore it.
	Wake()
	// Run works jobs until ctx ends, then stops gracefully: running
	// handlers get a grace period, and jobs that do not finish are handed
	// back for the next start. It recovers the jobs a crashed process left
	// running.
	Run(ctx context.Context) error
}

var (
	_ Engine = (*Scheduler)(nil)
	_ Engine = (*River[struct{}])(nil)
)
