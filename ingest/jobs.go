package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
)

// Workers are the durable job handlers of imprint serve: capture of a
// closed episode, extraction of a session's pending messages, and the
// embedding retry of a scope. Register them with the job engine:
// CaptureJob for imprint.JobCapture, ExtractJob for imprint.JobExtract,
// EmbedJob for imprint.JobEmbed.
type Workers struct {
	Store   imprint.Store
	Capture *capture.Runner
	Extract *extract.Runner
	// Events receives extraction.done and extraction.failed, each with the
	// job's scope; nil publishes nothing. The capture events are the
	// Capture runner's own (capture.Deps.Events).
	Events imprint.Publisher
	// Embedder fills in the vectors of records stored without one (nil:
	// embedding.provider none); EmbedTraces is capture.embed_traces.
	Embedder    imprint.Embedder
	EmbedTraces bool
	// Due queues the embedding retry when a job stored records without a
	// vector.
	Due    *Due
	Logger *slog.Logger
}

func (w *Workers) publish(ctx context.Context, scope imprint.Scope, name string, data any) {
	if w.Events != nil {
		w.Events.Publish(ctx, imprint.Event{Type: name, Scope: scope, Payload: data})
	}
}

func (w *Workers) log() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Logger
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

// CaptureJob captures a closed episode. A missing episode completes the job
// (nothing to capture); a store failure returns an error so the job is
// retried; a refusal of the LLM budget returns it, and the job waits.
func (w *Workers) CaptureJob(ctx context.Context, j imprint.Job) error {
	ep, err := w.Store.GetEpisode(ctx, j.Scope, j.EpisodeID)
	if errors.Is(err, imprint.ErrNotFound) {
		w.log().Warn("capture job: episode is gone", "episode_id", j.EpisodeID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("capture %s: %w", j.EpisodeID, err)
	}
	if ep.Status == imprint.EpisodeOpen {
		return fmt.Errorf("capture %s: episode is still open", j.EpisodeID)
	}
	// The runner announces the capture (capture.started, .done, .failed,
	// with the episode's scope) on the events of its Deps.
	res, err := w.Capture.Run(ctx, ep, ep.ClosedBy)
	if err != nil {
		return fmt.Errorf("capture %s: %w", ep.ID, err)
	}
	if w.Embedder != nil && w.EmbedTraces && embedWarned(res.Warnings, func(x capture.Warning) string { return x.Stage }) {
		w.Due.RetryEmbedding(ctx, j.Scope)
	}
	return nil
}

// ExtractJob extracts the session's pending messages window after window.
// A failed window leaves its messages pending and fails the job, which is
// retried with backoff; a window the LLM budget refused makes the job wait.
func (w *Workers) ExtractJob(ctx context.Context, j imprint.Job) error {
	embedFailed := false
	err := w.Extract.ExtractPending(ctx, j.Scope, j.SessionID, func(res extract.Result) {
		embedFailed = embedFailed || embedWarned(res.Warnings, func(x extract.Warning) string { return x.Stage })
		if res.Success {
			w.publish(ctx, j.Scope, imprint.EventExtractionDone, res)
		} else if ctx.Err() == nil && !budgetRefused(res) {
			w.publish(ctx, j.Scope, imprint.EventExtractionFailed, res)
		}
	})
	if embedFailed && w.Embedder != nil {
		w.Due.RetryEmbedding(context.WithoutCancel(ctx), j.Scope)
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
