package capture

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

func TestEmbedSteps(t *testing.T) {
	t.Parallel()
	steps := []Step{
		{Key: "0", UserText: "state one", AgentText: "action one"},
		{Key: "1", UserText: "ls", ToolCalls: []imprint.ToolCall{{Name: "shell", Input: []byte(`{"cmd":"ls"}`)}}},
		{Key: "2", AgentText: "reply without state"},
	}
	e := newRecordingEmbedder()
	vs, va, err := embedSteps(context.Background(), e, steps)
	if err != nil {
		t.Fatal(err)
	}
	calls := e.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d Embed calls, want 1 per episode", len(calls))
	}
	// Pairs (state, action) in step order; an empty state is not sent.
	want := []string{"state one", "action one", "ls", `shell({"cmd":"ls"})`, "reply without state"}
	if diff := cmp.Diff(want, calls[0]); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	ref, _ := e.inner.Embed(context.Background(), want)
	if !slices.Equal(vs[0], ref[0]) || !slices.Equal(va[0], ref[1]) || !slices.Equal(vs[1], ref[2]) || !slices.Equal(va[1], ref[3]) || !slices.Equal(va[2], ref[4]) {
		t.Error("vectors are not matched back to their step and kind")
	}
	if vs[2] != nil {
		t.Error("a step without state text got a state vector")
	}
	if slices.Equal(vs[0], va[0]) {
		t.Error("state and action vectors are equal")
	}
}

func TestEmbedStepsFailure(t *testing.T) {
	t.Parallel()
	e := newRecordingEmbedder()
	e.err = errEmbedDown
	vs, va, err := embedSteps(context.Background(), e, []Step{{Key: "0", UserText: "u", AgentText: "a"}})
	if err == nil {
		t.Fatal("no error")
	}
	if len(vs) != 1 || vs[0] != nil || va[0] != nil {
		t.Errorf("vectors %v %v, want nil", vs, va)
	}
}

func TestRunnerEmbedding(t *testing.T) {
	t.Parallel()
	ep := episode(U("say hi", 0), A("hi", 10), U("and bye", 20), A("bye", 30))
	t.Run("one call, vectors flagged", func(t *testing.T) {
		t.Parallel()
		e := newRecordingEmbedder()
		res, err := NewRunner(Deps{Embedder: e}, DefaultConfig()).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Calls()) != 1 || len(e.Calls()[0]) != 4 {
			t.Errorf("embed calls %v, want one call with 4 texts", e.Calls())
		}
		for _, tr := range res.Traces {
			if !tr.HasVecSummary || !tr.HasVecAction || tr.Embedder != "hash/384" || len(tr.VecSummary) != 384 {
				t.Errorf("trace %s: vectors %v/%v embedder %q", tr.StepKey, tr.HasVecSummary, tr.HasVecAction, tr.Embedder)
			}
		}
	})
	t.Run("failure gives null vectors and a warning", func(t *testing.T) {
		t.Parallel()
		e := newRecordingEmbedder()
		e.err = errEmbedDown
		res, err := NewRunner(Deps{Embedder: e}, DefaultConfig()).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Traces) != 2 {
			t.Fatalf("%d traces", len(res.Traces))
		}
		for _, tr := range res.Traces {
			if tr.HasVecSummary || tr.HasVecAction || tr.VecSummary != nil {
				t.Errorf("trace %s has vectors", tr.StepKey)
			}
		}
		if len(res.Warnings) != 1 || res.Warnings[0].Stage != "embed" {
			t.Errorf("warnings %+v, want one embed warning", res.Warnings)
		}
	})
	t.Run("embed_traces off makes no call", func(t *testing.T) {
		t.Parallel()
		e := newRecordingEmbedder()
		res, err := NewRunner(Deps{Embedder: e}, config(func(c *Config) { c.EmbedTraces = false })).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Calls()) != 0 || res.Traces[0].HasVecSummary {
			t.Errorf("%d embed calls", len(e.Calls()))
		}
	})
}
