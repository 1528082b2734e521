package capture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"golang.org/x/sync/errgroup"
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

// Result is what one capture did (CONTRACTS §5.1).
type Result struct {
	EpisodeID string           `json:"episode_id"`
	SessionID string           `json:"session_id"`
	ClosedBy  imprint.ClosedBy `json:"closed_by"`
	TraceIDs  []string         `json:"trace_ids"`
	Traces    []imprint.Trace  `json:"traces"`
	LLMCalls  LLMCalls         `json:"llm_calls"`
	StageMS   StageMS          `json:"stage_ms"`
	Warnings  []Warning        `json:"warnings"`
}

// LLMCalls counts the LLM operations of a capture that succeeded (a success
// after a repair retry counts once).
type LLMCalls struct {
	// ReflectionSynth counts per-step synthesis calls.
	ReflectionSynth int `json:"reflection_synth"`
	// AlphaScoring counts per-step grading calls.
	AlphaScoring int `json:"alpha_scoring"`
	// BatchedReflection counts batched calls: 0 or 1 per episode, one per
	// chunk of MaxBatchSteps for an episode of more steps.
	BatchedReflection int `json:"batched_reflection"`
}

// Total is the number of successful calls.
func (c LLMCalls) Total() int { return c.ReflectionSynth + c.AlphaScoring + c.BatchedReflection }

// StageMS is the time spent in each stage, in milliseconds. Batched scoring
// counts in Reflect; per-step grading in Alpha.
type StageMS struct {
	Extract   int64 `json:"extract"`
	Normalize int64 `json:"normalize"`
	Reflect   int64 `json:"reflect"`
	Alpha     int64 `json:"alpha"`
	Embed     int64 `json:"embed"`
	Persist   int64 `json:"persist"`
}

// Warning is something that degraded a capture without failing it.
type Warning struct {
	// Stage is capture, extract, batch, reflection, alpha, embed or persist.
	Stage string `json:"stage"`
	// Code is an error code (llm_unavailable, llm_timeout,
	// llm_output_malformed, ...) or abandoned_skipped / no_steps.
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Warning codes of capture itself.
const (
	CodeAbandonedSkipped = "abandoned_skipped"
	CodeNoSteps          = "no_steps"
)

// DeriveEpisodeID returns the id capture gives an episode without one
// (imprint.DeriveEpisodeID).
func DeriveEpisodeID(ep imprint.Episode) string { return imprint.DeriveEpisodeID(ep) }

// TraceID returns the id of the trace of step stepKey of an episode; it is
// the same on every capture of the episode.
func TraceID(episodeID, stepKey string) string {
	return imprint.DerivedID("imprint.trace.v1", episodeID, stepKey)
}

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
// saved. LLM and embedding failures are warnings in the Result. A store
// failure publishes capture.failed and is returned (wrapping the store's
// error, e.g. ErrConflict when the episode id belongs to another scope),
// with the Result computed so far. An abandoned episode with
// CaptureAbandoned off returns a Result with no traces and an
// abandoned_skipped warning.
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
	if ep.ClosedBy == imprint.ClosedAbandoned && !r.cfg.CaptureAbandoned {
		res.Warnings = append(res.Warnings, Warning{Stage: "capture", Code: CodeAbandonedSkipped,
			Message: "the episode was abandoned and capture.capture_abandoned is off"})
		r.log.capture.Info("capture skipped abandoned episode", "episode_id", ep.ID, "session_id", ep.SessionID)
		return computed{res: res, done: true}, nil
	}
	r.publish(ctx, ep.Scope, Event{Kind: EventStarted, EpisodeID: ep.ID, SessionID: ep.SessionID})

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
		r.publish(ctx, ep.Scope, Event{Kind: EventFailed, EpisodeID: ep.ID, SessionID: ep.SessionID, Stage: "persist", Err: err})
		r.log.capture.Error("capture failed", "episode_id", ep.ID, "session_id", ep.SessionID, "stage", "persist", "error", err)
		return res, err
	}
	res.StageMS.Persist = since(t)
	r.publish(ctx, ep.Scope, Event{Kind: EventDone, EpisodeID: ep.ID, SessionID: ep.SessionID, Result: &res})
	r.log.logSummary(&res, c.mode)
	return res, nil
}

func since(t time.Time) int64 { return time.Since(t).Milliseconds() }

// stepScore is the resolved reflection of one step and its α.
type stepScore struct {
	text   string
	source imprint.ReflectionSource
	alpha  float64
	usable bool
	reason string
}

// Scoring modes, as logged.
const (
	modeNone    = "none"
	modeBatch   = "batch"
	modePerStep = "per_step"
	modeMixed   = "batch+per_step"
)

// score resolves the reflection of every step and its α (seed §5, §6, §6a):
// adapter > extracted > synthesized > none, graded per step or in batched
// calls. No LLM call is made unless synthesis is on or a step has a
// reflection to grade.
func (r *Runner) score(ctx context.Context, ep imprint.Episode, steps []Step, res *Result) ([]stepScore, string) {
	t := time.Now()
	n := len(steps)
	out := make([]stepScore, n)
	existing := make([]string, n)
	anyReflection := false
	for i, st := range steps {
		text, src := ResolveReflection(st)
		existing[i] = text
		out[i] = stepScore{text: text, source: src}
		if text != "" {
			anyReflection = true
			out[i].alpha, out[i].usable = NeutralAlpha, true
		}
	}
	res.StageMS.Reflect = since(t)
	cfg := r.cfg
	batches, perStep := planScoring(n, anyReflection, cfg)
	if r.d.LLM == nil || (batches == nil && perStep == nil) {
		return out, modeNone
	}
	task := taskContext(ep, steps)

	mode := modePerStep
	if len(batches) > 0 {
		mode = modeBatch
		t := time.Now()
		failed := r.runBatches(ctx, steps, batches, existing, task, out, res)
		res.StageMS.Reflect += since(t)
		if len(failed) > 0 {
			perStep = failed
			mode = modeMixed
		}
	}
	if len(perStep) > 0 {
		var pv []string
		if cfg.ReflectionContextMode == ContextTaskDownstream && cfg.LongEpisodeReflectMode == LongPerStepDownstream &&
			n > cfg.BatchThreshold && cfg.DownstreamStepCount > 0 {
			pv = previews(steps, existing, cfg.DownstreamStepCount)
		}
		r.runPerStep(ctx, ep.ID, steps, perStep, task, pv, out, res)
	}
	return out, mode
}

// planScoring returns how score grades n steps under cfg: the positions of
// each batched call, or of the steps scored one call at a time. Both are
// nil when no call is due: no steps, or neither synthesis on nor a
// reflection (anyReflection) to grade.
func planScoring(n int, anyReflection bool, cfg Config) (batches [][]int, perStep []int) {
	if n == 0 || !(cfg.SynthReflections || (cfg.AlphaScoring && anyReflection)) {
		return nil, nil
	}
	switch {
	case cfg.BatchMode == BatchPerEpisode:
		return chunks(n, MaxBatchSteps), nil
	case cfg.BatchMode == BatchAuto && n <= cfg.BatchThreshold:
		// A threshold above MaxBatchSteps would otherwise send one call
		// too large for its reply to fit the token budget.
		return chunks(n, MaxBatchSteps), nil
	default:
		return nil, chunks(n, n)[0]
	}
}

// PlannedCalls returns the LLM calls a Runner configured with cfg (zero
// values taking their defaults, as in NewRunner) makes to score steps, the
// normalized steps of an episode, when every call succeeds and the model
// writes each reflection it is asked for: the batched calls, or per step a
// synthesis call for a step without a reflection (synthesis on) and a
// grading call for each step with one (α scoring on). A failed batch or a
// declined reflection changes the real count. It is what
// `imprint import --dry-run` estimates.
func PlannedCalls(steps []Step, cfg Config) LLMCalls {
	cfg = cfg.withDefaults()
	reflected := 0
	for _, st := range steps {
		if text, _ := ResolveReflection(st); text != "" {
			reflected++
		}
	}
	batches, perStep := planScoring(len(steps), reflected > 0, cfg)
	var c LLMCalls
	c.BatchedReflection = len(batches)
	if perStep == nil {
		return c
	}
	graded := reflected
	if cfg.SynthReflections {
		c.ReflectionSynth = len(perStep) - reflected
		graded = len(perStep)
	}
	if cfg.AlphaScoring {
		c.AlphaScoring = graded
	}
	return c
}

// runBatches scores each batch in one call (LLMConcurrency at a time) and
// returns the positions of the steps of failed batches, for the per-step
// path.
func (r *Runner) runBatches(ctx context.Context, steps []Step, batches [][]int, existing []string, task string, out []stepScore, res *Result) []int {
	results := make([]map[int]batchEntry, len(batches))
	errs := make([]error, len(batches))
	var g errgroup.Group
	g.SetLimit(r.cfg.LLMConcurrency)
	for b, idx := range batches {
		g.Go(func() error {
			results[b], errs[b] = batchScore(ctx, r.d.LLM, steps, idx, existing, task, r.cfg.SynthReflections)
			return nil
		})
	}
	_ = g.Wait() // workers report through errs
	var failed []int
	for b, idx := range batches {
		if err := errs[b]; err != nil {
			res.Warnings = append(res.Warnings, Warning{Stage: "batch", Code: imprint.ErrorCode(err),
				Message: "batched scoring failed; scoring these steps one by one: " + err.Error()})
			r.log.batch.Warn("batched scoring failed; falling back to per-step", "steps", len(idx), "error", err)
			failed = append(failed, idx...)
			continue
		}
		res.LLMCalls.BatchedReflection++
		synthAccepted := 0
		for _, i := range idx {
			e := results[b][i]
			sc := &out[i]
			if existing[i] == "" {
				text := cleanSynth(e.ReflectionText)
				if !r.cfg.SynthReflections || text == "" {
					*sc = stepScore{source: imprint.ReflectionNone}
					continue
				}
				sc.text, sc.source = text, imprint.ReflectionSynth
				synthAccepted++
			}
			if r.cfg.AlphaScoring {
				sc.alpha, sc.usable, sc.reason = finalAlpha(e.Alpha, e.Usable), e.Usable, e.Reason
			} else {
				sc.alpha, sc.usable = NeutralAlpha, true
			}
		}
		r.log.batch.Info("batch scored", "steps", len(idx), "synth_accepted", synthAccepted, "model", r.d.LLM.Model())
	}
	return failed
}

// runPerStep synthesizes missing reflections, then grades every reflection,
// one call per step with LLMConcurrency workers. Previews (pv) were computed
// before, so the steps do not depend on each other.
func (r *Runner) runPerStep(ctx context.Context, episodeID string, steps []Step, idx []int, task string, pv []string, out []stepScore, res *Result) {
	downstream := func(i int) string {
		if pv == nil {
			return ""
		}
		return pv[i]
	}
	if r.cfg.SynthReflections {
		t := time.Now()
		texts := make([]string, len(idx))
		errs := make([]error, len(idx))
		var g errgroup.Group
		g.SetLimit(r.cfg.LLMConcurrency)
		for k, i := range idx {
			if out[i].text != "" {
				continue
			}
			g.Go(func() error {
				texts[k], errs[k] = synthesize(ctx, r.d.LLM, steps, i, task, downstream(i))
				return nil
			})
		}
		_ = g.Wait()
		for k, i := range idx {
			if out[i].text != "" {
				continue
			}
			if err := errs[k]; err != nil {
				res.Warnings = append(res.Warnings, Warning{Stage: "reflection", Code: imprint.ErrorCode(err), Message: err.Error()})
				r.log.reflection.Warn("reflection synthesis failed", "episode_id", episodeID, "step", steps[i].Key, "error", err)
				continue
			}
			res.LLMCalls.ReflectionSynth++
			if texts[k] == "" {
				r.log.reflection.Debug("model declined to reflect", "episode_id", episodeID, "step", steps[i].Key)
				continue
			}
			out[i] = stepScore{text: texts[k], source: imprint.ReflectionSynth, alpha: NeutralAlpha, usable: true}
		}
		res.StageMS.Reflect += since(t)
	}
	if !r.cfg.AlphaScoring {
		return
	}
	t := time.Now()
	scores := make([]alphaScore, len(idx))
	errs := make([]error, len(idx))
	var g errgroup.Group
	g.SetLimit(r.cfg.LLMConcurrency)
	for k, i := range idx {
		if out[i].text == "" {
			continue
		}
		g.Go(func() error {
			scores[k], errs[k] = scoreAlpha(ctx, r.d.LLM, steps, i, task, downstream(i), out[i].text)
			return nil
		})
	}
	_ = g.Wait()
	for k, i := range idx {
		if out[i].text == "" {
			continue
		}
		if err := errs[k]; err != nil {
			res.Warnings = append(res.Warnings, Warning{Stage: "alpha", Code: imprint.ErrorCode(err),
				Message: "grading failed; keeping the neutral alpha: " + err.Error()})
			r.log.alpha.Warn("alpha scoring failed; neutral alpha kept", "episode_id", episodeID, "step", steps[i].Key, "error", err)
			continue
		}
		res.LLMCalls.AlphaScoring++
		out[i].alpha, out[i].usable, out[i].reason = scores[k].Alpha, scores[k].Usable, scores[k].Reason
		r.log.alpha.Debug("alpha scored", "episode_id", episodeID, "step", steps[i].Key, "alpha", scores[k].Alpha,
			"usable", scores[k].Usable, "reason", scores[k].Reason, "model", r.d.LLM.Model())
	}
	res.StageMS.Alpha += since(t)
}
