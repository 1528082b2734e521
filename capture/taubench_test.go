package capture

import (
	"context"
	"os"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// tauEpisodes reads the 40 real τ-bench trajectories.
func tauEpisodes(t testing.TB) []imprint.Episode {
	t.Helper()
	path := sharedTestdata(t, "tau-bench/airline-40.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open τ-bench testdata: %v", err)
	}
	defer f.Close()
	trs, err := importer.ReadTauBench(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var eps []imprint.Episode
	for _, tr := range trs {
		eps = append(eps, tr.Episodes...)
	}
	if len(eps) != 40 {
		t.Fatalf("%d episodes, want 40", len(eps))
	}
	return eps
}

// wantSteps counts the segments of ep with an assistant turn.
func wantSteps(ep imprint.Episode) int {
	n := 0
	inSeg, hasA := false, false
	for _, tr := range ep.Turns {
		switch tr.Role {
		case imprint.RoleUser:
			if inSeg && hasA {
				n++
				inSeg, hasA = false, false
			}
			inSeg = true
		case imprint.RoleAssistant:
			inSeg, hasA = true, true
		}
	}
	if hasA {
		n++
	}
	return n
}

func TestTauBenchEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eps := tauEpisodes(t)
	db := openDB(t)
	r := NewRunner(Deps{Store: db, Embedder: embedding.NewHash()}, DefaultConfig())
	var ids [][]string
	totalCalls, errCalls := 0, 0
	for _, ep := range eps {
		res, err := r.Run(ctx, ep, "")
		if err != nil {
			t.Fatalf("%s: %v", ep.SessionID, err)
		}
		if res.LLMCalls.Total() != 0 || len(res.Warnings) != 0 {
			t.Errorf("%s: llm %+v warnings %+v without an LLM", ep.SessionID, res.LLMCalls, res.Warnings)
		}
		if len(res.Traces) != wantSteps(ep) {
			t.Errorf("%s: %d traces, want %d steps", ep.SessionID, len(res.Traces), wantSteps(ep))
		}
		ids = append(ids, res.TraceIDs)
		for _, tr := range res.Traces {
			totalCalls += len(tr.ToolCalls)
			for _, tc := range tr.ToolCalls {
				if tc.Name == "" || tc.ToolCallID == "" {
					t.Errorf("%s: tool call %+v lacks name or id", ep.SessionID, tc)
				}
				if tc.Error != "" {
					errCalls++
				}
			}
			if strings.Contains(tr.UserText, "[observation") {
				t.Errorf("%s: tool result became an observation: %q", ep.SessionID, tr.UserText)
			}
			if !tr.HasVecSummary && strings.TrimSpace(tr.UserText) != "" {
				t.Errorf("%s: trace without a state vector", ep.SessionID)
			}
		}
	}
	if totalCalls != 254 || errCalls != 17 {
		t.Errorf("%d tool calls with %d errors, want 254 and 17 (every call of the file)", totalCalls, errCalls)
	}

	// Task 0 failed (reward 0): its payment error is in its traces' tool calls.
	scope := imprint.DefaultScope()
	stored, err := db.ListTraces(ctx, scope, imprint.TraceFilter{EpisodeID: eps[0].ID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tr := range stored {
		for _, tc := range tr.ToolCalls {
			if strings.Contains(tc.Error, "payment amount does not add up") {
				found = true
			}
		}
	}
	if !found {
		t.Error("task 0's failing tool call is not in its stored traces")
	}
	ep0, err := db.GetEpisode(ctx, scope, eps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if ep0.Meta.Reward == nil || *ep0.Meta.Reward != 0 || ep0.Meta.TaskID != "0" {
		t.Errorf("stored episode meta %+v, want reward 0 and task 0", ep0.Meta)
	}

	// Re-capture leaves the same traces.
	for i, ep := range eps {
		res, err := r.Run(ctx, ep, "")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(res.TraceIDs, ",") != strings.Join(ids[i], ",") {
			t.Errorf("%s: trace ids changed on re-capture", ep.SessionID)
		}
	}
	all, err := db.ListTraces(ctx, scope, imprint.TraceFilter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, x := range ids {
		want += len(x)
	}
	if len(all) != want {
		t.Errorf("%d traces stored after re-capture, want %d", len(all), want)
	}
}

func TestTauBenchWithLLM(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eps := tauEpisodes(t)
	if testing.Short() {
		eps = eps[:8]
	}
	for _, mode := range []string{BatchAuto, BatchPerEpisode} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			db := openDB(t)
			srv, m := newLLM(t)
			srv.Handle(OpBatch, echoBatch(t))
			srv.Script(OpSynth, llmtest.Text("I checked the reservation before changing it."))
			srv.Script(OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.6, "usable": true}))
			cfg := config(func(c *Config) { c.BatchMode, c.SynthReflections = mode, true })
			r := NewRunner(Deps{Store: db, LLM: m, Embedder: embedding.NewHash()}, cfg)
			for _, ep := range eps {
				before := len(srv.Requests())
				res, err := r.Run(ctx, ep, "")
				if err != nil {
					t.Fatal(err)
				}
				calls := srv.Requests()[before:]
				n := len(res.Traces)
				if mode == BatchPerEpisode || n <= cfg.BatchThreshold {
					if len(calls) != 1 || res.LLMCalls != (LLMCalls{BatchedReflection: 1}) {
						t.Errorf("%s (%d steps): %d requests, llm_calls %+v, want one batched call", ep.SessionID, n, len(calls), res.LLMCalls)
						continue
					}
					req := batchRequests(t, srv)[len(batchRequests(t, srv))-1]
					if len(req.Steps) != n {
						t.Errorf("%s: batch sent %d steps, want %d", ep.SessionID, len(req.Steps), n)
					}
					for i, x := range res.Traces {
						if x.ReflectionSource != imprint.ReflectionSynth || deref(x.Reflection) != "batch "+itoa(i) || x.Alpha != echoAlpha(i) {
							t.Errorf("%s step %d: %s %q α %v", ep.SessionID, i, x.ReflectionSource, deref(x.Reflection), x.Alpha)
							break
						}
					}
					for i, s := range req.Steps {
						if s.Idx != i || s.Outcome == "" || s.State == "" && s.Action == "" && len(s.ToolCalls) == 0 {
							t.Errorf("%s: step %d sent as %+v", ep.SessionID, i, s)
						}
					}
				} else if res.LLMCalls.BatchedReflection != 0 || res.LLMCalls.ReflectionSynth != n {
					t.Errorf("%s (%d steps): llm_calls %+v, want per-step synthesis", ep.SessionID, n, res.LLMCalls)
				}
			}
		})
	}
}
