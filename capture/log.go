package capture

import (
	"log/slog"
)

// Log channels (the "channel" attribute of every line).
const (
	chanCapture    = "core.capture"
	chanExtractor  = "core.capture.extractor"
	chanReflection = "core.capture.reflection"
	chanAlpha      = "core.capture.alpha"
	chanBatch      = "core.capture.batch"
	chanEmbed      = "core.capture.embed"
)

// loggers holds one logger per channel.
type loggers struct {
	capture, extractor, reflection, alpha, batch, embed *slog.Logger
}

func newLoggers(base *slog.Logger) loggers {
	if base == nil {
		base = slog.New(slog.DiscardHandler)
	}
	return loggers{
		capture:    base.With("channel", chanCapture),
		extractor:  base.With("channel", chanExtractor),
		reflection: base.With("channel", chanReflection),
		alpha:      base.With("channel", chanAlpha),
		batch:      base.With("channel", chanBatch),
		embed:      base.With("channel", chanEmbed),
	}
}

// logSummary writes the one-line run summary, and each warning.
func (l loggers) logSummary(res *Result, mode string) {
	l.capture.Info("capture done",
		"episode_id", res.EpisodeID, "session_id", res.SessionID, "closed_by", res.ClosedBy,
		"traces", len(res.TraceIDs), "scoring", mode,
		"llm_synth", res.LLMCalls.ReflectionSynth, "llm_alpha", res.LLMCalls.AlphaScoring, "llm_batch", res.LLMCalls.BatchedReflection,
		"extract_ms", res.StageMS.Extract, "normalize_ms", res.StageMS.Normalize, "reflect_ms", res.StageMS.Reflect,
		"alpha_ms", res.StageMS.Alpha, "embed_ms", res.StageMS.Embed, "persist_ms", res.StageMS.Persist,
		"warnings", len(res.Warnings))
	for _, w := range res.Warnings {
		l.capture.Warn("capture warning", "episode_id", res.EpisodeID, "stage", w.Stage, "code", w.Code, "message", w.Message)
	}
}
