package capture

import (
	"strings"
	"testing"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
)

func TestExtractReflection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		text        string
		wantHas     string // "" means no reflection
		wantMissing string
	}{
		{"markdown heading block", "Fixed it.\n\n### Reasoning:\nThe bug was in the null check because the cache was cold.\n\n### Result:\nAll green.", "null check because the cache was cold", "All green"},
		{"heading at end without newline", "Done.\n## Why\nThe config file was read before the flag was parsed.", "before the flag was parsed", ""},
		{"rationale heading, case-insensitive", "## RATIONALE\nCheapest route that keeps the user's dates.\n", "Cheapest route", ""},
		{"chinese heading", "完成。\n\n### 思考过程\n因为权限问题，所以先检查了目录的所有者。\n", "权限问题", ""},
		{"heading 我的理由", "## 我的理由：\n用户只要直飞航班，所以排除了转机。", "排除了转机", ""},
		{"reflection tag", "ok <reflection>I retried the request once, then gave up on the mirror.</reflection> bye", "retried the request once", "bye"},
		{"inline label", "Final answer is 42.\n\nReflection: I chose 42 because the docstring says so and tests agree.", "docstring", "Final answer"},
		{"inline reasoning label with bold", "**Reasoning:** the user wants the cheapest fare, so economy.", "cheapest fare", ""},
		{"inline label mid-sentence is not a label", "Here is my reasoning: the cache was cold and slow.", "", ""},
		{"heading 思考", "好的。\n\n## 思考\n因为权限问题，所以先检查了目录的所有者。\n", "权限问题", "好的"},
		{"heading why with colon", "Done.\n\n### Why:\nThe cache was cold, so the first call timed out.\n\nBye.", "cache was cold", "Bye"},
		{"level-4 heading is not a section", "#### Reasoning\nThe cache was cold and the call timed out.\n", "", ""},
		{"level-1 heading is not a section", "# Reasoning\nThe cache was cold and the call timed out.\n", "", ""},
		{"heading with an unrelated title", "## Summary\nThe cache was cold and the call timed out.\n", "", ""},
		{"heading body too short falls through to a later pattern", "## Why\nok\n\n<reflection>I retried because the mirror was down.</reflection>", "mirror was down", ""},
		{"inline rationale label", "Booked HAT001.\nRationale: it is the only direct flight that fits the dates.", "only direct flight", "Booked"},
		{"inline label with full-width colon", "Reasoning：the user asked for the cheapest fare, so economy.", "cheapest fare", ""},
		{"chinese why with 这样 and 理由", "已改签。我这样做的理由：用户只要直飞航班所以排除了转机。", "排除了转机", "已改签"},
		{"whitespace-only tag", "<reflection>   \n\t </reflection>", "", ""},
		{"unicode whitespace only after a label", "Reflection:\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000", "", ""},
		{"nine characters is too short", "<reflection>123456789</reflection>", "", ""},
		{"chinese why", "已取消预订。我这么做的原因是用户明确要求全额退款并且在24小时内。", "全额退款", "已取消"},
		{"chinese thought process", "思考过程如下：用户的证书只能用于新预订，所以改用信用卡。", "证书只能用于新预订", "如下"},
		{"nothing", "Done.", "", ""},
		{"too short", "Reflection: ok", "", ""},
		{"empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ExtractReflection(tt.text)
			if tt.wantHas == "" {
				if got != "" {
					t.Errorf("got %q, want none", got)
				}
				return
			}
			if !strings.Contains(got, tt.wantHas) {
				t.Errorf("got %q, want it to contain %q", got, tt.wantHas)
			}
			if tt.wantMissing != "" && strings.Contains(got, tt.wantMissing) {
				t.Errorf("got %q, must not contain %q", got, tt.wantMissing)
			}
		})
	}
}

func TestExtractReflectionMinLength(t *testing.T) {
	t.Parallel()
	// Ten runes (CJK) are enough; the minimum counts characters, not bytes.
	if got := ExtractReflection("<reflection>因为用户只要直飞航班</reflection>"); got != "因为用户只要直飞航班" {
		t.Errorf("got %q, want the ten-character reflection", got)
	}
}

func TestExtractReflectionCap(t *testing.T) {
	t.Parallel()
	got := ExtractReflection("Reasoning: " + strings.Repeat("X", 5000))
	if n := utf8.RuneCountInString(got); n != MaxReflectionChars {
		t.Errorf("reflection has %d runes, want the cap %d", n, MaxReflectionChars)
	}
	got = ExtractReflection("Reasoning: " + strings.Repeat("思", 3000))
	if n := utf8.RuneCountInString(got); n != MaxReflectionChars || !utf8.ValidString(got) {
		t.Errorf("CJK reflection has %d runes (valid %v), want the cap %d", n, utf8.ValidString(got), MaxReflectionChars)
	}
}

func TestResolveReflection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		step     Step
		wantText string
		wantSrc  imprint.ReflectionSource
	}{
		{"adapter wins over extracted", Step{RawReflection: " I picked X because Y. ", AgentText: "### Reasoning:\nsomething else entirely\n"}, "I picked X because Y.", imprint.ReflectionAdapter},
		{"extracted", Step{AgentText: "### Reasoning:\nthe cache was cold, so the first call timed out\n"}, "the cache was cold, so the first call timed out", imprint.ReflectionExtracted},
		{"whitespace adapter reflection is none", Step{RawReflection: "   ", AgentText: "Done."}, "", imprint.ReflectionNone},
		{"adapter reflection is capped", Step{RawReflection: strings.Repeat("y", 2000)}, strings.Repeat("y", MaxReflectionChars), imprint.ReflectionAdapter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text, src := ResolveReflection(tt.step)
			if text != tt.wantText || src != tt.wantSrc {
				t.Errorf("got (%q, %s), want (%q, %s)", text, src, tt.wantText, tt.wantSrc)
			}
		})
	}
}
