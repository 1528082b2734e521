package capture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// Deps are what a Runner works with.
type Deps struct {
	// Store saves the episode and its traces. Nil runs everything but the
	// save (a dry run).
	Store imprint.EpisodeStore
	// LLM writes and grades reflections; nil means no LLM: reflections the
	// agent wrote keep the neutral α.
	LLM imprint.LLM
	// Embedder makes the state and action vectors; nil means no vectors.
	Embedder imprint.Embedder
	// Events receives capture.started, capture.done and capture.failed,
	// each with the episode's scope; nil publishes nothing.
	Events imprint.Publisher
	// Logger receives the log channels core.capture*; nil logs nothing.
	Logger *slog.Logger
	// Redact replaces secrets in a text (redact.String in the binary); it is
	// applied to every turn before anything is scored, embedded or stored.
	// Nil keeps texts as given.
	Redact func(string) string
}

// Runner captures episodes. It is safe for concurrent use.
type Runner struct {
	d   Deps
	cfg Config
	log loggers
	now func() time.Time
	// events is d.Events, or a publisher that drops them.
	events imprint.Publisher
}

// NewRunner returns a Runner. Zero or out-of-range numbers in cfg take their
// defaults; call cfg.Validate first to reject them instead.
func NewRunner(d Deps, cfg Config) *Runner {
	return &Runner{d: d, cfg: cfg.withDefaults(), log: newLoggers(d.Logger), now: time.Now, events: imprint.PublisherOr(d.Events)}
}

// Config returns the configuration the runner uses.
func (r *Runner) Config() Config { return r.cfg }

// Prepare validates ep as Run does and returns it as it would be saved
// (imprint.PrepareEpisode at the Runner's time, secrets replaced by
// Deps.Redact). Errors are of kind ErrInvalid and name the field.
func (r *Runner) Prepare(ep imprint.Episode, closedBy imprint.ClosedBy) (imprint.Episode, error) {
	return imprint.PrepareEpisode(ep, closedBy, imprint.At(r.now()), r.d.Redact)
}

// Run captures ep, closed as closedBy (empty: ep.ClosedBy, else finalized):
// it extracts and normalizes its steps, resolves and scores their
// reflections, embeds them and saves the episode with its traces in one
// transaction, replacing the traces of an earlier capture of the same
// episode. Invalid input is an error of kind ErrInvalid and nothing is
// saved. A valid episode publishes capture.started, then capture.done
// once saved. LLM and embedding failures are warnings in the Result. A
// store failure publishes capture.failed (unless ctx is done) and is
// returned (wrapping the store's error, e.g. ErrConflict when the episode
// id belongs to another scope), with the Result computed so far; a refusal
// of the LLM budget is returned with no capture.failed (the episode
// waits). An abandoned episode with CaptureAbandoned off returns, and
// publishes as done, a Result with no traces and an abandoned_skipped
// warning.
func (r *Runner) Run(ctx context.Context, ep imprint.Episode, closedBy imprint.ClosedBy) (Result, error) {
	c, err := r.compute(ctx, ep, closedBy)
	if err != nil || c.done {
		return c.res, err
	}
	t := time.Now()
	if r.d.Store != nil {
		err = r.d.Store.SaveCapture(ctx, c.ep, c.traces)
	}
	return r.finish(ctx, c, t, err)
}

// RunMany captures episodes as Run does, one after another, but saves
// them together: in one SaveCaptures call when the store supports
// imprint.CaptureSaver (one transaction for all), else one SaveCapture each. It
// returns the result of each episode. When an episode cannot be prepared
// (ErrInvalid) nothing is saved and that error is returned; when the
// save fails every episode fails with it. When an LLM budget refuses a
// call of an episode (imprint.ErrLLMBudget), the episodes before it are
// saved and only their results are returned, with the refusal.
func (r *Runner) RunMany(ctx context.Context, eps []imprint.Episode, closedBy imprint.ClosedBy) ([]Result, error) {
	cs := make([]computed, 0, len(eps))
	var refused error
	for _, ep := range eps {
		c, err := r.compute(ctx, ep, closedBy)
		if errors.Is(err, imprint.ErrLLMBudget) {
			refused = err
			break
		}
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	eps = eps[:len(cs)]
	// With a CaptureSaver every episode is saved up front in one call;
	// else each is saved on its own as its result is completed.
	saver, batched := imprint.AsCaptureSaver(r.d.Store)
	t := time.Now()
	var serr error
	if batched {
		var save []imprint.Episode
		var traces [][]imprint.Trace
		for _, c := range cs {
			if !c.done {
				save = append(save, c.ep)
				traces = append(traces, c.traces)
			}
		}
		if len(save) > 0 {
			serr = saver.SaveCaptures(ctx, save, traces)
		}
	}
	out := make([]Result, len(eps))
	var first error
	for i, c := range cs {
		if c.done {
			out[i] = c.res
			continue
		}
		err := serr
		if !batched {
			t = time.Now()
			if r.d.Store != nil {
				err = r.d.Store.SaveCapture(ctx, c.ep, c.traces)
			}
		}
		out[i], err = r.finish(ctx, c, t, err)
		if err != nil && first == nil {
			first = err
		}
	}
	if first == nil {
		first = refused
	}
	return out, first
}

// computed is an episode worked out by compute, ready to save: done means
// there is nothing to save (res is the whole result).
type computed struct {
	ep     imprint.Episode
	traces []imprint.Trace
	res    Result
	mode   string
	done   bool
}

// compute does everything Run does before saving.
func (r *Runner) compute(ctx context.Context, ep imprint.Episode, closedBy imprint.ClosedBy) (computed, error) {
	ep, err := r.Prepare(ep, closedBy)
	if err != nil {
		return computed{}, fmt.Errorf("capture: %w", err)
	}
	res := Result{EpisodeID: ep.ID, SessionID: ep.SessionID, ClosedBy: ep.ClosedBy,
		TraceIDs: []string{}, Traces: []imprint.Trace{}, Warnings: []Warning{}}
	r.publish(ctx, ep.Scope, Event{Kind: EventStarted, EpisodeID: ep.ID, SessionID: ep.SessionID})
	if ep.ClosedBy == imprint.ClosedAbandoned && !r.cfg.CaptureAbandoned {
		res.Warnings = append(res.Warnings, Warning{Stage: "capture", Code: CodeAbandonedSkipped,
			Message: "the episode was abandoned and capture.capture_abandoned is off"})
		r.log.capture.Info("capture skipped abandoned episode", "episode_id", ep.ID, "session_id", ep.SessionID)
		// Done, with nothing saved: a live badge that showed the episode
		// capturing moves on.
		r.publish(ctx, ep.Scope, Event{Kind: EventDone, EpisodeID: ep.ID, SessionID: ep.SessionID, Result: &res})
		return computed{res: res, done: true}, nil
	}

	t := time.Now()
	raw := ExtractSteps(ep)
	res.StageMS.Extract = since(t)
	if len(raw) == 1 && raw[0].Synthetic {
		r.log.extractor.Debug("synthetic step for an episode without assistant turns", "episode_id", ep.ID)
	}
	r.log.extractor.Debug("steps extracted", "episode_id", ep.ID, "turns", len(ep.Turns), "steps", len(raw))

	t = time.Now()
	steps := Normalize(raw, r.cfg)
	res.StageMS.Normalize = since(t)
	if len(steps) == 0 {
		res.Warnings = append(res.Warnings, Warning{Stage: "extract", Code: CodeNoSteps, Message: "the episode has no usable steps"})
	}

	sr := r
	var scoped *imprint.ScopedLLM
	if r.d.LLM != nil {
		// The episode's scope pays for its calls (llm.budget); a refused
		// call fails the capture, so the episode waits instead of being
		// saved with neutral scores.
		scoped = imprint.WithLLMScope(r.d.LLM, ep.Scope)
		cp := *r
		cp.d.LLM = scoped
		sr = &cp
	}
	scores, mode := sr.score(ctx, ep, steps, &res)
	if scoped != nil && scoped.Refused() != nil {
		return computed{}, fmt.Errorf("capture %s: %w", ep.ID, scoped.Refused())
	}

	t = time.Now()
	var vs, va [][]float32
	embedder := ""
	if r.cfg.EmbedTraces && r.d.Embedder != nil && len(steps) > 0 {
		vs, va, err = embedSteps(ctx, r.d.Embedder, steps)
		if err != nil {
			res.Warnings = append(res.Warnings, Warning{Stage: "embed", Code: imprint.ErrorCode(err), Message: err.Error()})
			r.log.embed.Warn("embedding failed; traces saved without vectors", "episode_id", ep.ID, "error", err)
		}
		embedder = r.d.Embedder.Name()
	}
	res.StageMS.Embed = since(t)

	created := imprint.At(r.now())
	traces := make([]imprint.Trace, len(steps))
	for i, st := range steps {
		tr := imprint.Trace{
			ID: TraceID(ep.ID, st.Key), EpisodeID: ep.ID, SessionID: ep.SessionID, Scope: ep.Scope,
			StepKey: st.Key, StepIndex: st.Index, TS: st.TS,
			UserText: st.UserText, AgentText: st.AgentText, ToolCalls: st.ToolCalls,
			ReflectionSource: scores[i].source, Alpha: scores[i].alpha, Usable: scores[i].usable,
			Depth: st.Depth, IsSubagent: st.IsSubagent, Truncated: st.Truncated, CreatedAt: created,
		}
		if tr.ToolCalls == nil {
			tr.ToolCalls = []imprint.ToolCall{}
		}
		if scores[i].text != "" {
			s := scores[i].text
			tr.Reflection = &s
		}
		if vs != nil && vs[i] != nil {
			tr.VecSummary, tr.HasVecSummary = vs[i], true
		}
		if va != nil && va[i] != nil {
			tr.VecAction, tr.HasVecAction = va[i], true
		}
		if tr.HasVecSummary || tr.HasVecAction {
			tr.Embedder = embedder
		}
		traces[i] = tr
		res.TraceIDs = append(res.TraceIDs, tr.ID)
	}
	res.Traces = traces
	ep.TraceIDs = res.TraceIDs

	return computed{ep: ep, traces: traces, res: res, mode: mode}, nil
}

// finish completes the result of a computed episode saved from t on with
// err (nil when the save succeeded), and reports it.
func (r *Runner) finish(ctx context.Context, c computed, t time.Time, err error) (Result, error) {
	ep, res := c.ep, c.res
	if err != nil {
		res.StageMS.Persist = since(t)
		err = fmt.Errorf("capture episode %s: save traces: %w", ep.ID, err)
		if ctx.Err() == nil {
			// A run stopped by its context did not fail: it is redone.
			r.publish(ctx, ep.Scope, Event{Kind: EventFailed, EpisodeID: ep.ID, SessionID: ep.SessionID, Stage: "persist", Err: err})
		}
		r.log.capture.Error("capture failed", "episode_id", ep.ID, "session_id", ep.SessionID, "stage", "persist", "error", err)
		return res, err
	}
	res.StageMS.Persist = since(t)
	r.publish(ctx, ep.Scope, Event{Kind: EventDone, EpisodeID: ep.ID, SessionID: ep.SessionID, Result: &res})
	r.log.logSummary(&res, c.mode)
	return res, nil
}

func since(t time.Time) int64 { return time.Since(t).Milliseconds() }
