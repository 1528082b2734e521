package capture

import (
	"context"
	"strings"
	"testing"

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
