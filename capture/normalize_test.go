package capture

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

func TestClamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		limit int
	}{
		{"ascii", strings.Repeat("A", 800) + strings.Repeat("Z", 400), 1000},
		{"cjk", strings.Repeat("思", 700) + strings.Repeat("考", 700), 1000},
		{"emoji", strings.Repeat("😀", 500) + strings.Repeat("x", 500), 300},
		{"small limit", strings.Repeat("ab", 100), minClampChars},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, cut := Clamp(tt.in, tt.limit)
			if !cut {
				t.Fatal("not reported as cut")
			}
			if !utf8.ValidString(got) {
				t.Errorf("result is not valid UTF-8")
			}
			if n := utf8.RuneCountInString(got); n > tt.limit {
				t.Errorf("%d runes, limit %d", n, tt.limit)
			}
			if !strings.Contains(got, TruncationMarker) {
				t.Errorf("no marker in %q", got)
			}
			head, tail, _ := strings.Cut(got, TruncationMarker)
			if !strings.HasPrefix(tt.in, head) || !strings.HasSuffix(tt.in, tail) {
				t.Errorf("head/tail are not the text's start and end")
			}
			budget := tt.limit - utf8.RuneCountInString(TruncationMarker)
			h, tl := utf8.RuneCountInString(head), utf8.RuneCountInString(tail)
			if want := int(math.Round(0.55 * float64(budget))); h != want || h+tl != budget {
				t.Errorf("head %d + tail %d runes of a %d budget, want head %d (55 %%) and the rest as tail", h, tl, budget, want)
			}
		})
	}
	if got, cut := Clamp(strings.Repeat("é", 100), 100); cut || utf8.RuneCountInString(got) != 100 {
		t.Errorf("a text of exactly the limit in runes (200 bytes) was cut")
	}
	if got, cut := Clamp("short", 100); got != "short" || cut {
		t.Errorf("short text changed: %q %v", got, cut)
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	cfg := config(func(c *Config) { c.MaxTextChars, c.MaxToolOutputChars = 1000, 300 })
	st := func(key, user, agent string, calls ...imprint.ToolCall) Step {
		return Step{Key: key, UserText: user, AgentText: agent, ToolCalls: calls}
	}
	t.Run("short texts unchanged", func(t *testing.T) {
		t.Parallel()
		got := Normalize([]Step{st("0", "u", "a")}, cfg)
		if diff := cmp.Diff([]Step{st("0", "u", "a")}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("long agent text and tool output are clamped", func(t *testing.T) {
		t.Parallel()
		got := Normalize([]Step{st("0", "u", strings.Repeat("A", 800)+strings.Repeat("Z", 400),
			imprint.ToolCall{Name: "x", Output: strings.Repeat("X", 1000)})}, cfg)
		if len(got) != 1 || !got[0].Truncated {
			t.Fatalf("got %+v, want one truncated step", got)
		}
		a := got[0].AgentText
		if utf8.RuneCountInString(a) != 1000 || !strings.HasPrefix(a, "AAA") || !strings.HasSuffix(a, "ZZZ") || !strings.Contains(a, "[truncated]") {
			t.Errorf("agent text %d runes, starts %q, ends %q", utf8.RuneCountInString(a), a[:3], a[len(a)-3:])
		}
		if o := got[0].ToolCalls[0].Output; utf8.RuneCountInString(o) > 300 || !strings.Contains(o, "[truncated]") {
			t.Errorf("tool output has %d runes", utf8.RuneCountInString(o))
		}
	})
	t.Run("empty and whitespace-only steps are dropped", func(t *testing.T) {
		t.Parallel()
		got := Normalize([]Step{st("0", "", ""), st("1", "  \n", "\t"), st("2", "", "", imprint.ToolCall{Name: "t"})}, cfg)
		if len(got) != 1 || got[0].Key != "2" {
			t.Errorf("kept %+v, want only the tool step", got)
		}
	})
	t.Run("adjacent duplicates dropped, others kept", func(t *testing.T) {
		t.Parallel()
		got := Normalize([]Step{st("0", "u", "a"), st("1", "u", "a"), st("2", "u2", "b"), st("3", "u", "a")}, cfg)
		var keys []string
		for _, s := range got {
			keys = append(keys, s.Key)
		}
		if diff := cmp.Diff([]string{"0", "2", "3"}, keys); diff != "" {
			t.Errorf("keys (-want +got):\n%s", diff)
		}
	})
	t.Run("long texts that differ only where the clamp cuts are both kept", func(t *testing.T) {
		t.Parallel()
		a := strings.Repeat("h", 600) + " book flight HAT001 " + strings.Repeat("t", 600)
		b := strings.Repeat("h", 600) + " book flight HAT999 " + strings.Repeat("t", 600)
		got := Normalize([]Step{st("0", "u", a), st("1", "u", b)}, cfg)
		if len(got) != 2 {
			t.Errorf("kept %d steps, want 2: they are different steps", len(got))
		}
		out := strings.Repeat("o", 400)
		got = Normalize([]Step{st("0", "u", "a", imprint.ToolCall{Name: "x", Output: out + "1" + out}),
			st("1", "u", "a", imprint.ToolCall{Name: "x", Output: out + "2" + out})}, cfg)
		if len(got) != 2 {
			t.Errorf("kept %d steps, want 2: their tool outputs differ", len(got))
		}
	})
	t.Run("same text but different tool calls are kept", func(t *testing.T) {
		t.Parallel()
		got := Normalize([]Step{st("0", "u", "a", imprint.ToolCall{Name: "x", Output: "1"}), st("1", "u", "a", imprint.ToolCall{Name: "x", Output: "2"})}, cfg)
		if len(got) != 2 {
			t.Errorf("kept %d steps, want 2", len(got))
		}
	})
	t.Run("input not modified", func(t *testing.T) {
		t.Parallel()
		in := []Step{st("0", "u", "a", imprint.ToolCall{Name: "x", Output: strings.Repeat("X", 1000)})}
		Normalize(in, cfg)
		if len(in[0].ToolCalls[0].Output) != 1000 {
			t.Error("Normalize changed its input's tool calls")
		}
	})
}
