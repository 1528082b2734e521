package capture

import (
	imprint "github.com/imprint-dev/imprint"
	conf "github.com/imprint-dev/imprint/config" // conf: the tests have a helper named config
)

// Batch modes (capture.batch_mode).
const (
	// BatchPerStep scores every step with its own calls.
	BatchPerStep = "per_step"
	// BatchPerEpisode scores a whole episode in one call (chunks of
	// MaxBatchSteps steps for longer episodes).
	BatchPerEpisode = "per_episode"
	// BatchAuto batches episodes of at most BatchThreshold steps (in chunks
	// of MaxBatchSteps when the threshold is set higher) and scores longer
	// ones per step.
	BatchAuto = "auto"
)

// Reflection context modes (capture.reflection_context_mode).
const (
	ContextTask           = "task"
	ContextTaskDownstream = "task_downstream"
)

// Long-episode reflection modes (capture.long_episode_reflect_mode).
const (
	LongPerStep           = "per_step"
	LongPerStepDownstream = "per_step_downstream"
)

// MaxBatchSteps is the largest number of steps sent in one batched scoring
// call; per_episode sends longer episodes in chunks of this size.
const MaxBatchSteps = 64

// MaxDownstreamSteps caps DownstreamStepCount.
const MaxDownstreamSteps = 3

// Config mirrors the capture.* configuration keys.
type Config struct {
	// MaxTextChars caps user and agent text, in runes, marker included.
	MaxTextChars int
	// MaxToolOutputChars caps each tool output and error, in runes.
	MaxToolOutputChars int
	// EmbedTraces turns on the state and action vectors.
	EmbedTraces bool
	// AlphaScoring asks the LLM to grade reflections; off means α 0.5.
	AlphaScoring bool
	// SynthReflections lets the LLM write a reflection for a step that has none.
	SynthReflections bool
	// LLMConcurrency bounds the per-step LLM calls in flight for one episode.
	LLMConcurrency int
	// BatchMode is BatchPerStep, BatchPerEpisode or BatchAuto.
	BatchMode string
	// BatchThreshold is the largest episode BatchAuto batches.
	BatchThreshold int
	// ReflectionContextMode is ContextTask or ContextTaskDownstream.
	ReflectionContextMode string
	// LongEpisodeReflectMode is LongPerStep or LongPerStepDownstream.
	LongEpisodeReflectMode string
	// DownstreamStepCount is how many following steps a preview shows (0..3).
	DownstreamStepCount int
	// CaptureAbandoned captures abandoned episodes too.
	CaptureAbandoned bool
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		MaxTextChars:           4000,
		MaxToolOutputChars:     2000,
		EmbedTraces:            true,
		AlphaScoring:           true,
		SynthReflections:       false,
		LLMConcurrency:         4,
		BatchMode:              BatchAuto,
		BatchThreshold:         12,
		ReflectionContextMode:  ContextTask,
		LongEpisodeReflectMode: LongPerStep,
		DownstreamStepCount:    3,
		CaptureAbandoned:       true,
	}
}

// ConfigFrom returns the capture.* keys of the configuration as a Config.
func ConfigFrom(c conf.CaptureConfig) Config {
	return Config{
		MaxTextChars:           c.MaxTextChars,
		MaxToolOutputChars:     c.MaxToolOutputChars,
		EmbedTraces:            c.EmbedTraces,
		AlphaScoring:           c.AlphaScoring,
		SynthReflections:       c.SynthReflections,
		LLMConcurrency:         c.LLMConcurrency,
		BatchMode:              c.BatchMode,
		BatchThreshold:         c.BatchThreshold,
		ReflectionContextMode:  c.ReflectionContextMode,
		LongEpisodeReflectMode: c.LongEpisodeReflectMode,
		DownstreamStepCount:    c.DownstreamStepCount,
		CaptureAbandoned:       c.CaptureAbandoned,
	}
}

// Validate returns an error of kind ErrInvalid naming the first bad key.
func (c Config) Validate() error {
	switch {
	case c.MaxTextChars < minClampChars:
		return imprint.Invalidf("capture.max_text_chars must be at least %d", minClampChars)
	case c.MaxToolOutputChars < minClampChars:
		return imprint.Invalidf("capture.max_tool_output_chars must be at least %d", minClampChars)
	case c.LLMConcurrency < 1:
		return imprint.Invalidf("capture.llm_concurrency must be at least 1")
	case c.BatchThreshold < 1:
		return imprint.Invalidf("capture.batch_threshold must be at least 1")
	case c.DownstreamStepCount < 0 || c.DownstreamStepCount > MaxDownstreamSteps:
		return imprint.Invalidf("capture.downstream_step_count must be between 0 and %d", MaxDownstreamSteps)
	}
	switch c.BatchMode {
	case BatchPerStep, BatchPerEpisode, BatchAuto:
	default:
		return imprint.Invalidf("capture.batch_mode %q is not per_step, per_episode or auto", c.BatchMode)
	}
	switch c.ReflectionContextMode {
	case ContextTask, ContextTaskDownstream:
	default:
		return imprint.Invalidf("capture.reflection_context_mode %q is not task or task_downstream", c.ReflectionContextMode)
	}
	switch c.LongEpisodeReflectMode {
	case LongPerStep, LongPerStepDownstream:
	default:
		return imprint.Invalidf("capture.long_episode_reflect_mode %q is not per_step or per_step_downstream", c.LongEpisodeReflectMode)
	}
	return nil
}

// withDefaults replaces zero or out-of-range values with the defaults so a
// partly filled Config still runs.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.MaxTextChars < minClampChars {
		c.MaxTextChars = d.MaxTextChars
	}
	if c.MaxToolOutputChars < minClampChars {
		c.MaxToolOutputChars = d.MaxToolOutputChars
	}
	if c.LLMConcurrency < 1 {
		c.LLMConcurrency = d.LLMConcurrency
	}
	if c.BatchThreshold < 1 {
		c.BatchThreshold = d.BatchThreshold
	}
	if c.BatchMode == "" {
		c.BatchMode = d.BatchMode
	}
	if c.ReflectionContextMode == "" {
		c.ReflectionContextMode = d.ReflectionContextMode
	}
	if c.LongEpisodeReflectMode == "" {
		c.LongEpisodeReflectMode = d.LongEpisodeReflectMode
	}
	c.DownstreamStepCount = min(max(c.DownstreamStepCount, 0), MaxDownstreamSteps)
	return c
}
