package capture

import (
	"encoding/json"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
)

// PlannedRequests returns the requests a Runner configured with cfg sends
// to score the steps of ep (its normalized steps) when every call succeeds
// and the model writes each reflection it is asked for: the calls the
// Result counts (LLMCalls), each with the system prompt and the user
// message the runner builds. A step's grading call after a synthesis shows
// no reflection (the synthesized one is not known before the call). It is
// what `imprint import --dry-run` counts the calls and prompt tokens of.
func PlannedRequests(ep imprint.Episode, steps []Step, cfg Config) ([]imprint.LLMRequest, error) {
	cfg = cfg.withDefaults()
	if !cfg.CaptureAbandoned && ep.ClosedBy == imprint.ClosedAbandoned {
		return nil, nil
	}
	existing := make([]string, len(steps))
	anyReflection := false
	for i, st := range steps {
		existing[i], _ = ResolveReflection(st)
		anyReflection = anyReflection || existing[i] != ""
	}
	batches, perStep := planScoring(len(steps), anyReflection, cfg)
	if batches == nil && perStep == nil {
		return nil, nil
	}
	task := taskContext(ep, steps)
	user := func(op, system, text string) imprint.LLMRequest {
		return imprint.LLMRequest{Op: op, System: system, Messages: []imprint.ChatMessage{{Role: "user", Content: text}}}
	}
	var out []imprint.LLMRequest
	for _, idx := range batches {
		body, err := json.Marshal(newBatchRequest(steps, idx, existing, task, cfg.SynthReflections))
		if err != nil {
			return nil, fmt.Errorf("encode batch request: %w", err)
		}
		out = append(out, user(OpBatch, batchSystem, string(body)))
	}
	var pv []string
	if len(perStep) > 0 && cfg.ReflectionContextMode == ContextTaskDownstream && cfg.LongEpisodeReflectMode == LongPerStepDownstream &&
		len(steps) > cfg.BatchThreshold && cfg.DownstreamStepCount > 0 {
		pv = previews(steps, existing, cfg.DownstreamStepCount)
	}
	for _, i := range perStep {
		v := viewOf(steps, i, task)
		if pv != nil {
			v.Downstream = pv[i]
		}
		if existing[i] == "" && !cfg.SynthReflections {
			continue // nothing to write, nothing to grade
		}
		if existing[i] == "" {
			text, err := render("synth.user.tmpl", v)
			if err != nil {
				return nil, err
			}
			out = append(out, user(OpSynth, synthSystem, text))
		}
		if cfg.AlphaScoring {
			v.Reflection = quoted(existing[i])
			text, err := render("alpha.user.tmpl", v)
			if err != nil {
				return nil, err
			}
			out = append(out, user(OpAlpha, alphaSystem, text))
		}
	}
	return out, nil
}
