package capture

import imprint "github.com/imprint-dev/imprint"

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
