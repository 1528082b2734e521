package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/imprint-dev/imprint/llm/llmtest"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// Every stage logs on its channel (seed §11); the run summary carries the
// trace count, the stage timings and the warnings.
func TestLogChannels(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()

	srv, m := newLLM(t)
	srv.Script(OpSynth, llmtest.Text("NO_REFLECTION"))
	srv.Script(OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.6, "usable": true, "reason": "concrete"}))
	srv.Handle(OpBatch, echoBatch(t))
	e := newRecordingEmbedder()
	e.err = errEmbedDown
	ep := episode(U("q", 0), AR("a", "I answered because the user asked a question.", 10), U("q2", 20), A("a2", 30))
	perStep := config(func(c *Config) { c.BatchMode, c.SynthReflections = BatchPerStep, true })
	if _, err := NewRunner(Deps{LLM: m, Embedder: e, Logger: logger}, perStep).Run(ctx, ep, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRunner(Deps{LLM: m, Logger: logger}, DefaultConfig()).Run(ctx, ep, ""); err != nil {
		t.Fatal(err)
	}

	seen := map[string]bool{}
	var summaries []map[string]any
	for _, l := range buf.lines(t) {
		ch, _ := l["channel"].(string)
		seen[ch] = true
		if ch == chanCapture && l["msg"] == "capture done" {
			summaries = append(summaries, l)
		}
	}
	for _, ch := range []string{"core.capture", "core.capture.extractor", "core.capture.reflection", "core.capture.alpha", "core.capture.batch", "core.capture.embed"} {
		if !seen[ch] {
			t.Errorf("nothing logged on %s", ch)
		}
	}
	if len(summaries) != 2 {
		t.Fatalf("%d run summaries, want one per capture", len(summaries))
	}
	s := summaries[0]
	for _, k := range []string{"episode_id", "traces", "extract_ms", "normalize_ms", "reflect_ms", "alpha_ms", "embed_ms", "persist_ms", "warnings"} {
		if _, ok := s[k]; !ok {
			t.Errorf("run summary lacks %q: %v", k, s)
		}
	}
	if s["traces"] != float64(2) || s["warnings"] != float64(1) {
		t.Errorf("run summary traces %v warnings %v, want 2 and 1 (the embed failure)", s["traces"], s["warnings"])
	}
}
