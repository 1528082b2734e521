package capture

import (
	"context"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"golang.org/x/sync/errgroup"
)

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
