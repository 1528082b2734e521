package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// echoScores answers a batched scoring request with a reflection and an α
// for every step it was sent.
func echoScores(t *testing.T) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		var req struct {
			Steps []struct {
				Idx int `json:"idx"`
			} `json:"steps"`
		}
		if err := json.Unmarshal([]byte(r.User), &req); err != nil {
			t.Errorf("batch request: %v", err)
			return llmtest.Fault500()
		}
		scores := []map[string]any{}
		for _, s := range req.Steps {
			scores = append(scores, map[string]any{"idx": s.Idx, "reflection_text": fmt.Sprintf("I answered step %d because it was asked.", s.Idx),
				"alpha": 0.7, "usable": true, "reason": "fine"})
		}
		return llmtest.JSON(map[string]any{"scores": scores})
	}
}

// TestEstimateEpisodeMatchesCapture checks that the dry run's count of
// capture calls for an episode is what a capture run with the same
// configuration makes, for synthesis and α scoring on and off and each
// batch mode, on an episode of four steps, one of them with a reflection.
func TestEstimateEpisodeMatchesCapture(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var turns []imprint.Turn
	for i := range 4 {
		at := imprint.At(t0.Add(time.Duration(i) * time.Minute))
		turns = append(turns, imprint.Turn{Role: imprint.RoleUser, Content: fmt.Sprintf("question %d", i), TS: at})
		a := imprint.Turn{Role: imprint.RoleAssistant, Content: fmt.Sprintf("answer %d", i), TS: at}
		if i == 0 {
			a.Meta.Reflection = "I answered first because the question was plain."
		}
		turns = append(turns, a)
	}
	ep := imprint.Episode{ID: "ep-est", SessionID: "se-est", Turns: turns}
	for _, tt := range []struct {
		name         string
		mode         string
		threshold    int
		synth, alpha bool
	}{
		{"per step, synthesis, no alpha", capture.BatchPerStep, 0, true, false},
		{"per step, synthesis and alpha", capture.BatchPerStep, 0, true, true},
		{"per step, alpha only", capture.BatchPerStep, 0, false, true},
		{"per step, neither", capture.BatchPerStep, 0, false, false},
		{"per episode, synthesis", capture.BatchPerEpisode, 0, true, false},
		{"auto under the threshold", capture.BatchAuto, 0, false, true},
		{"auto over the threshold, synthesis, no alpha", capture.BatchAuto, 2, true, false},
		{"empty mode takes auto", "", 0, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Handle(capture.OpBatch, echoScores(t))
			srv.Script(capture.OpSynth, llmtest.Text("I decided to answer directly because the user asked a plain question."))
			srv.Script(capture.OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.6, "usable": true}))
			cfg := capture.DefaultConfig()
			cfg.BatchMode, cfg.BatchThreshold, cfg.SynthReflections, cfg.AlphaScoring, cfg.EmbedTraces = tt.mode, tt.threshold, tt.synth, tt.alpha, false
			r := capture.NewRunner(capture.Deps{LLM: llmtest.NewClient(t, srv, llmtest.FormatOpenAI)}, cfg)
			res, err := r.Run(context.Background(), ep, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Warnings) != 0 {
				t.Fatalf("capture warnings %+v", res.Warnings)
			}
			est := &Estimate{Capture: r.Config()}
			est.Episode(ep)
			if made := len(srv.Requests()); est.Calls != made {
				t.Errorf("estimated %d calls, capture made %d (%+v)", est.Calls, made, res.LLMCalls)
			}
			if (est.Calls == 0) != (est.Tokens == 0) {
				t.Errorf("estimated %d calls with %d prompt tokens", est.Calls, est.Tokens)
			}
			// The estimate counts the prompts capture sent, except a
			// grading prompt after a synthesis, which shows the reflection
			// the model wrote.
			sent := 0
			for _, r := range srv.Requests() {
				sent += imprint.EstimateTokens(r.System) + imprint.EstimateTokens(r.User)
			}
			if synthThenGrade := res.LLMCalls.ReflectionSynth > 0 && res.LLMCalls.AlphaScoring > 0; !synthThenGrade && est.Tokens != sent {
				t.Errorf("estimated %d prompt tokens, capture sent %d", est.Tokens, sent)
			}
		})
	}
}
