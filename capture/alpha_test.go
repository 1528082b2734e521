package capture

import (
	"context"
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

func TestScoreAlpha(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		reply      llmtest.Reply
		wantAlpha  float64
		wantUsable bool
	}{
		{"parsed", llmtest.JSON(map[string]any{"alpha": 0.82, "usable": true, "reason": "clear causal claim"}), 0.82, true},
		{"unusable is zero", llmtest.JSON(map[string]any{"alpha": 0.9, "usable": false, "reason": "tautology"}), 0, false},
		{"clamped high", llmtest.JSON(map[string]any{"alpha": 1.7, "usable": true}), 1, true},
		{"clamped low", llmtest.JSON(map[string]any{"alpha": -0.5, "usable": true}), 0, true},
		{"in prose and fences", llmtest.Text("Sure:\n```json\n{\"alpha\": 0.4, \"usable\": true, \"reason\": \"ok\"}\n```"), 0.4, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, m := newLLM(t)
			srv.Script(OpAlpha, tt.reply)
			steps := []Step{{Key: "0", UserText: "list files", AgentText: "ran ls", ToolCalls: []imprint.ToolCall{{Name: "shell", Output: "a.txt"}}}}
			got, err := scoreAlpha(context.Background(), m, steps, 0, "Task: list files", "", "I used ls because it is the cheapest.")
			if err != nil {
				t.Fatal(err)
			}
			if got.Alpha != tt.wantAlpha || got.Usable != tt.wantUsable {
				t.Errorf("got α %v usable %v, want %v %v", got.Alpha, got.Usable, tt.wantAlpha, tt.wantUsable)
			}
			reqs := srv.RequestsFor(OpAlpha)
			if len(reqs) != 1 {
				t.Fatalf("%d alpha requests, want 1", len(reqs))
			}
			r := reqs[0]
			if !r.JSONMode || r.Header.Get("X-Imprint-Op") != OpAlpha {
				t.Errorf("request JSON mode %v, op header %q", r.JSONMode, r.Header.Get("X-Imprint-Op"))
			}
			for _, want := range []string{"STATE:\nlist files", "ACTION:\nran ls", "OUTCOME:\na.txt", "REFLECTION:\nI used ls because it is the cheapest.", "TASK:\nTask: list files", "- shell("} {
				if !strings.Contains(r.User, want) {
					t.Errorf("alpha prompt lacks %q:\n%s", want, r.User)
				}
			}
		})
	}
}

func TestScoreAlphaMalformedAfterRepair(t *testing.T) {
	t.Parallel()
	srv, m := newLLM(t)
	srv.Script(OpAlpha, llmtest.JSON(map[string]any{"alpha": "high", "usable": true}))
	_, err := scoreAlpha(context.Background(), m, []Step{{Key: "0", AgentText: "x"}}, 0, "", "", "because reasons of substance")
	if code := imprint.ErrorCode(err); code != "llm_output_malformed" {
		t.Fatalf("error %v (code %q), want llm_output_malformed", err, code)
	}
	if n := len(srv.RequestsFor(OpAlpha)); n != 2 {
		t.Errorf("%d requests, want the call and one repair retry", n)
	}
}

// The runner's α policy: scored, disabled, no LLM, LLM failure.
func TestRunnerAlphaPolicy(t *testing.T) {
	t.Parallel()
	ep := episode(U("list the files", 0), AR("done", "I chose the shell tool because it's the cheapest.", 10))
	tests := []struct {
		name        string
		cfg         func(*Config)
		reply       *llmtest.Reply
		noLLM       bool
		wantAlpha   float64
		wantUsable  bool
		wantCalls   int
		wantWarning string
	}{
		{name: "scored", reply: ptr(llmtest.JSON(map[string]any{"alpha": 0.8, "usable": true, "reason": "concrete"})), wantAlpha: 0.8, wantUsable: true, wantCalls: 1},
		{name: "unusable", reply: ptr(llmtest.JSON(map[string]any{"alpha": 0.9, "usable": false})), wantAlpha: 0, wantUsable: false, wantCalls: 1},
		{name: "scoring off", cfg: func(c *Config) { c.AlphaScoring = false }, wantAlpha: 0.5, wantUsable: true},
		{name: "no LLM", noLLM: true, wantAlpha: 0.5, wantUsable: true},
		{name: "LLM down", reply: ptr(llmtest.Fault500()), wantAlpha: 0.5, wantUsable: true, wantWarning: "llm_unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, m := newLLM(t)
			if tt.reply != nil {
				srv.Script(OpAlpha, *tt.reply)
			}
			d := Deps{LLM: m}
			if tt.noLLM {
				d.LLM = nil
			}
			res, err := NewRunner(d, config(func(c *Config) { c.BatchMode = BatchPerStep; applyCfg(c, tt.cfg) })).Run(context.Background(), ep, "")
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Traces[0]
			if tr.Alpha != tt.wantAlpha || tr.Usable != tt.wantUsable || tr.ReflectionSource != imprint.ReflectionAdapter {
				t.Errorf("α %v usable %v source %s, want %v %v adapter", tr.Alpha, tr.Usable, tr.ReflectionSource, tt.wantAlpha, tt.wantUsable)
			}
			if res.LLMCalls.AlphaScoring != tt.wantCalls {
				t.Errorf("alpha_scoring %d, want %d", res.LLMCalls.AlphaScoring, tt.wantCalls)
			}
			var codes []string
			for _, w := range res.Warnings {
				if w.Stage == "alpha" {
					codes = append(codes, w.Code)
				}
			}
			if tt.wantWarning == "" && len(codes) > 0 || tt.wantWarning != "" && (len(codes) != 1 || codes[0] != tt.wantWarning) {
				t.Errorf("alpha warnings %v, want %q", codes, tt.wantWarning)
			}
			if tt.reply == nil && len(srv.Requests()) > 0 {
				t.Errorf("%d LLM requests, want none", len(srv.Requests()))
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func applyCfg(c *Config, fn func(*Config)) {
	if fn != nil {
		fn(c)
	}
}

// A reply that fails validation and succeeds on the repair retry counts as
// one successful operation (CONTRACTS §3), with no warning.
func TestLLMCallsCountRepairOnce(t *testing.T) {
	t.Parallel()
	ep := exchanges(2, true)
	t.Run("per-step alpha", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		srv.Handle(OpAlpha, func(r llmtest.Request) llmtest.Reply {
			if len(r.Messages) == 1 { // first attempt: α is not a number
				return llmtest.JSON(map[string]any{"alpha": "high", "usable": true})
			}
			return llmtest.JSON(map[string]any{"alpha": 0.7, "usable": true})
		})
		res, err := NewRunner(Deps{LLM: m}, config(func(c *Config) { c.BatchMode = BatchPerStep })).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(srv.RequestsFor(OpAlpha)); n != 4 {
			t.Errorf("%d alpha requests, want 2 calls and 2 repairs", n)
		}
		if res.LLMCalls != (LLMCalls{AlphaScoring: 2}) || len(res.Warnings) != 0 {
			t.Errorf("llm_calls %+v warnings %+v, want alpha_scoring 2 and none", res.LLMCalls, res.Warnings)
		}
		for _, tr := range res.Traces {
			if tr.Alpha != 0.7 {
				t.Errorf("step %s α %v, want the repaired 0.7", tr.StepKey, tr.Alpha)
			}
		}
	})
	t.Run("batched", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		srv.Handle(OpBatch, func(r llmtest.Request) llmtest.Reply {
			if len(r.Messages) == 1 { // first attempt: one entry short
				return llmtest.JSON(map[string]any{"scores": []any{map[string]any{"idx": 0, "alpha": 0.3, "usable": true}}})
			}
			return llmtest.JSON(map[string]any{"scores": []any{
				map[string]any{"idx": 0, "alpha": 0.3, "usable": true}, map[string]any{"idx": 1, "alpha": 0.4, "usable": true}}})
		})
		res, err := NewRunner(Deps{LLM: m}, DefaultConfig()).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(srv.RequestsFor(OpBatch)); n != 2 {
			t.Errorf("%d batch requests, want the call and one repair", n)
		}
		if res.LLMCalls != (LLMCalls{BatchedReflection: 1}) || len(res.Warnings) != 0 {
			t.Errorf("llm_calls %+v warnings %+v, want one batched call and no warning", res.LLMCalls, res.Warnings)
		}
		if res.Traces[0].Alpha != 0.3 || res.Traces[1].Alpha != 0.4 {
			t.Errorf("α %v %v, want 0.3 0.4", res.Traces[0].Alpha, res.Traces[1].Alpha)
		}
	})
}

// Per-step calls of one episode never exceed llm_concurrency in flight.
func TestPerStepConcurrencyBound(t *testing.T) {
	t.Parallel()
	srv, m := newLLM(t)
	srv.Script(OpAlpha, llmtest.Reply{Delay: 20 * time.Millisecond, Text: `{"alpha": 0.5, "usable": true}`})
	cfg := config(func(c *Config) { c.BatchMode, c.LLMConcurrency = BatchPerStep, 2 })
	res, err := NewRunner(Deps{LLM: m}, cfg).Run(context.Background(), exchanges(8, true), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.LLMCalls.AlphaScoring != 8 {
		t.Errorf("alpha_scoring %d, want 8", res.LLMCalls.AlphaScoring)
	}
	if n := srv.MaxInFlight(); n > 2 {
		t.Errorf("%d requests in flight at once, want at most llm_concurrency 2", n)
	}
}
