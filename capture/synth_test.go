package capture

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

func TestSynthesize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  string
	}{
		{"happy path", llmtest.Text("I ran the shell first because the listing was cheap to get."), "I ran the shell first because the listing was cheap to get."},
		{"sentinel", llmtest.Text("NO_REFLECTION"), ""},
		{"sentinel with punctuation", llmtest.Text(" NO_REFLECTION. "), ""},
		{"blank", llmtest.Text("   "), ""},
		{"thinking stripped", llmtest.Text("<think>hmm</think>I checked pwd to know where I was."), "I checked pwd to know where I was."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, m := newLLM(t)
			srv.Script(OpSynth, tt.reply)
			steps := []Step{{Key: "0", UserText: "where am I?", ToolCalls: []imprint.ToolCall{{Name: "shell", Input: []byte(`{"command":"pwd"}`), Output: "/srv/project"}}}}
			got, err := synthesize(context.Background(), m, steps, 0, "Task: inspect current project", "")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			r := srv.RequestsFor(OpSynth)[0]
			if r.JSONMode {
				t.Error("synthesis asked for JSON mode; it is plain text")
			}
			for _, want := range []string{"TASK:\nTask: inspect current project", "STATE:\nwhere am I?", "ACTION:\n(none)", "TOOLS:\n- shell({\"command\":\"pwd\"})", "OUTCOME:\n/srv/project"} {
				if !strings.Contains(r.User, want) {
					t.Errorf("synth prompt lacks %q:\n%s", want, r.User)
				}
			}
			if strings.Contains(r.User, "DOWNSTREAM:") {
				t.Error("synth prompt has a DOWNSTREAM section without previews")
			}
		})
	}
}

func TestSynthesizeCap(t *testing.T) {
	t.Parallel()
	srv, m := newLLM(t)
	srv.Script(OpSynth, llmtest.Text(strings.Repeat("Z", 5000)))
	got, err := synthesize(context.Background(), m, []Step{{Key: "0", AgentText: "x"}}, 0, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(got); n != MaxReflectionChars {
		t.Errorf("reflection has %d runes, want %d", n, MaxReflectionChars)
	}
}

// Through the runner: synthesized reflections are graded; failures are
// warnings; synthesis off makes no call.
func TestRunnerSynthesis(t *testing.T) {
	t.Parallel()
	ep := episode(U("list the directory", 0), A("ok", 10))
	t.Run("synthesized then graded", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		srv.Script(OpSynth, llmtest.Text("I decided to run ls because the user requested a directory listing."))
		srv.Script(OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.6, "usable": true}))
		res, err := NewRunner(Deps{LLM: m}, config(func(c *Config) { c.SynthReflections, c.BatchMode = true, BatchPerStep })).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		tr := res.Traces[0]
		if tr.Reflection == nil || !strings.Contains(*tr.Reflection, "directory listing") || tr.ReflectionSource != imprint.ReflectionSynth || tr.Alpha != 0.6 {
			t.Errorf("trace reflection %v source %s α %v", tr.Reflection, tr.ReflectionSource, tr.Alpha)
		}
		if res.LLMCalls != (LLMCalls{ReflectionSynth: 1, AlphaScoring: 1}) {
			t.Errorf("llm_calls %+v", res.LLMCalls)
		}
		if a := srv.RequestsFor(OpAlpha); len(a) != 1 || !strings.Contains(a[0].User, "REFLECTION:\nI decided to run ls") {
			t.Errorf("alpha request does not grade the synthesized reflection: %+v", a)
		}
	})
	t.Run("declined", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		srv.Script(OpSynth, llmtest.Text("NO_REFLECTION"))
		res, err := NewRunner(Deps{LLM: m}, config(func(c *Config) { c.SynthReflections, c.BatchMode = true, BatchPerStep })).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		tr := res.Traces[0]
		if tr.Reflection != nil || tr.ReflectionSource != imprint.ReflectionNone || tr.Alpha != 0 || tr.Usable {
			t.Errorf("trace %+v, want no reflection, α 0, unusable", tr)
		}
		if len(srv.RequestsFor(OpAlpha)) != 0 {
			t.Error("graded a reflection that does not exist")
		}
	})
	t.Run("LLM error is a warning", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		srv.Script(OpSynth, llmtest.Fault500())
		res, err := NewRunner(Deps{LLM: m}, config(func(c *Config) { c.SynthReflections, c.BatchMode = true, BatchPerStep })).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Warnings) != 1 || res.Warnings[0].Stage != "reflection" || res.Warnings[0].Code != "llm_unavailable" {
			t.Errorf("warnings %+v, want one reflection/llm_unavailable", res.Warnings)
		}
		if res.LLMCalls.ReflectionSynth != 0 || res.Traces[0].Reflection != nil {
			t.Errorf("llm_calls %+v reflection %v", res.LLMCalls, res.Traces[0].Reflection)
		}
	})
	t.Run("nothing to score makes no call", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		for _, mode := range []string{BatchPerStep, BatchPerEpisode, BatchAuto} {
			res, err := NewRunner(Deps{LLM: m}, config(func(c *Config) { c.BatchMode = mode })).Run(context.Background(), ep, "")
			if err != nil {
				t.Fatal(err)
			}
			if res.LLMCalls.Total() != 0 {
				t.Errorf("%s: llm_calls %+v", mode, res.LLMCalls)
			}
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d LLM requests, want none", n)
		}
	})
}
