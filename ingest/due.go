package ingest

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/record"
)

// Jobs enqueues durable jobs (the schedule engine). An enqueue with a
// UniqueKey joins the unfinished job of that key.
type Jobs interface {
	Enqueue(ctx context.Context, j imprint.Job) (imprint.Job, error)
}

// waker is what a job engine offers to look for work now instead of at
// its next poll.
type waker interface{ Wake() }

// Due queues the work a recording made due: the one place that turns
// "the session reached extraction.every_n_rounds" and "messages were
// stored without a vector" into jobs. It implements imprint.Ingest.
type Due struct {
	// Jobs is the job queue; nil queues nothing.
	Jobs Jobs
	// Embedding is set when an embedder is configured, so a record stored
	// without a vector is worth an embedding retry.
	Embedding bool
	// Logger logs failed enqueues; nil discards them.
	Logger *slog.Logger
}

var _ imprint.Ingest = (*Due)(nil)

// MessagesRecorded implements imprint.Ingest.
func (d *Due) MessagesRecorded(ctx context.Context, scope imprint.Scope, r imprint.Recorded) {
	if d == nil || d.Jobs == nil {
		return
	}
	if d.Embedding && r.Unembedded > 0 {
		d.RetryEmbedding(ctx, scope)
	}
	if !r.ExtractionDue {
		return
	}
	// Queued now rather than at the planner's next tick; a failed enqueue
	// leaves the session marked due for the planner.
	if err := d.ExtractSession(ctx, scope, r.SessionID); err != nil {
		d.log().Warn("queue extraction of a due session failed", "session_id", r.SessionID, "error", err)
	}
}

// ExtractSession implements imprint.Ingest. ErrUnavailable when there is
// no job queue.
func (d *Due) ExtractSession(ctx context.Context, scope imprint.Scope, sessionID string) error {
	if d == nil || d.Jobs == nil {
		return fmt.Errorf("queue extraction of %s: %w: no job queue", sessionID, imprint.ErrUnavailable)
	}
	if _, err := d.Jobs.Enqueue(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: sessionID,
		UniqueKey: imprint.ExtractJobKey(scope, sessionID)}); err != nil {
		return err
	}
	if w, ok := d.Jobs.(waker); ok {
		w.Wake()
	}
	return nil
}

// RetryEmbedding enqueues the embedding retry job of scope (one unfinished
// per scope). A failure is logged: the records are stored either way.
func (d *Due) RetryEmbedding(ctx context.Context, scope imprint.Scope) {
	if d == nil || d.Jobs == nil {
		return
	}
	if _, err := d.Jobs.Enqueue(ctx, imprint.Job{Kind: imprint.JobEmbed, Scope: scope, UniqueKey: imprint.EmbedJobKey(scope)}); err != nil {
		d.log().Warn("queue embedding retry failed", "scope", scope.String(), "error", err)
	}
}

func (d *Due) log() *slog.Logger {
	if d.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Logger
}

// RecordedOf is what res made due.
func RecordedOf(res record.Result) imprint.Recorded {
	return imprint.Recorded{SessionID: res.SessionID, Messages: res.RecordedCount,
		Unembedded: res.RecordedCount - res.VectorsWritten, ExtractionDue: res.SchedulerNotified}
}

// TurnRecorder records the text turns of live sessions as L0 messages
// (session.TurnRecorder), counts them and queues what they made due.
type TurnRecorder struct {
	Recorder *record.Recorder
	Ingest   imprint.Ingest
	// Count is told how many messages were recorded (for /metrics); nil
	// skips it.
	Count func(n int)
}

// RecordTurns implements session.TurnRecorder.
func (t *TurnRecorder) RecordTurns(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) error {
	res, err := t.Recorder.Record(ctx, scope, sessionID, msgs)
	if err != nil {
		return fmt.Errorf("record turns: %w", err)
	}
	if t.Count != nil {
		t.Count(res.RecordedCount)
	}
	if t.Ingest != nil {
		r := RecordedOf(res)
		r.SessionID = sessionID
		t.Ingest.MessagesRecorded(ctx, scope, r)
	}
	return nil
}
