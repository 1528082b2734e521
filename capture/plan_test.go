package capture

import (
	"context"
	"fmt"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// TestPlannedCallsMatchARun checks that PlannedRequests (what the dry-run
// estimate counts) plans the calls a Runner makes when every call succeeds, for each batch mode with
// synthesis and α scoring on and off, on episodes with no, some and only
// reflections, short and longer than the auto threshold.
func TestPlannedCallsMatchARun(t *testing.T) {
	t.Parallel()
	mixed := episode(
		U("list the files", 0), AR("Listing.", "I listed first because I needed to see the tree.", 10),
		U("open the readme", 20), A("Opened.", 30),
		U("thanks", 40), A("You are welcome.", 50),
	)
	episodes := map[string]imprint.Episode{
		"no reflection":   exchanges(3, false),
		"all reflected":   exchanges(3, true),
		"mixed":           mixed,
		"long, no refl.":  exchanges(14, false),
		"long, reflected": exchanges(14, true),
	}
	for _, mode := range []string{BatchPerStep, BatchPerEpisode, BatchAuto, ""} {
		for _, synth := range []bool{false, true} {
			for _, alpha := range []bool{false, true} {
				for name, ep := range episodes {
					cfg := config(func(c *Config) {
						c.BatchMode, c.SynthReflections, c.AlphaScoring, c.EmbedTraces = mode, synth, alpha, false
					})
					if mode == "" {
						cfg.BatchThreshold = 0 // the default, 12, as in NewRunner
					}
					t.Run(fmt.Sprintf("%s/synth=%v/alpha=%v/%s", mode, synth, alpha, name), func(t *testing.T) {
						t.Parallel()
						srv, m := newLLM(t)
						srv.Handle(OpBatch, echoBatch(t))
						srv.Script(OpSynth, llmtest.Text("I decided to answer directly because the user asked a plain question."))
						srv.Script(OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.6, "usable": true}))
						res, err := NewRunner(Deps{LLM: m}, cfg).Run(context.Background(), ep, "")
						if err != nil {
							t.Fatal(err)
						}
						if len(res.Warnings) != 0 {
							t.Fatalf("warnings %+v", res.Warnings)
						}
						want := plannedCalls(t, ep, cfg)
						if res.LLMCalls != want {
							t.Errorf("run made %+v, PlannedRequests says %+v", res.LLMCalls, want)
						}
						if n := len(srv.Requests()); n != want.Total() {
							t.Errorf("the fake answered %d calls, PlannedRequests says %d", n, want.Total())
						}
					})
				}
			}
		}
	}
}

// TestPlannedCallsNoSteps: an episode without steps costs nothing.
func TestPlannedCallsNoSteps(t *testing.T) {
	t.Parallel()
	cfg := config(func(c *Config) { c.SynthReflections = true })
	if got, err := PlannedRequests(imprint.Episode{}, nil, cfg); err != nil || len(got) != 0 {
		t.Errorf("PlannedRequests(no steps) = %d requests, %v; want none", len(got), err)
	}
}

// plannedCalls counts the requests PlannedRequests plans for ep by op.
func plannedCalls(t *testing.T, ep imprint.Episode, cfg Config) LLMCalls {
	t.Helper()
	reqs, err := PlannedRequests(ep, Normalize(ExtractSteps(ep), cfg), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var c LLMCalls
	for _, r := range reqs {
		switch r.Op {
		case OpBatch:
			c.BatchedReflection++
		case OpSynth:
			c.ReflectionSynth++
		case OpAlpha:
			c.AlphaScoring++
		default:
			t.Fatalf("planned request of op %q", r.Op)
		}
	}
	return c
}
