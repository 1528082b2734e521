package capture

import (
	"bytes"
	"strings"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
)

// TruncationMarker replaces the middle of a clamped text.
const TruncationMarker = "\n…[truncated]…\n"

// minClampChars is the smallest limit Clamp is configured with; below it
// the head and tail around the marker would be meaningless.
const minClampChars = 64

// headShare is the part of a clamped text's budget kept from its start (the
// rest comes from its end).
const headShare = 0.55

// Clamp shortens s to at most limit runes, marker included, keeping the
// first 55 % and the last 45 % of the budget around TruncationMarker. It
// never splits a UTF-8 sequence. It reports whether s was cut.
func Clamp(s string, limit int) (string, bool) {
	if limit <= 0 || utf8.RuneCountInString(s) <= limit {
		return s, false
	}
	r := []rune(s)
	budget := limit - utf8.RuneCountInString(TruncationMarker)
	if budget < 2 {
		return string(r[:limit]), true
	}
	head := int(float64(budget)*headShare + 0.5)
	tail := budget - head
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(string(r[:head]))
	b.WriteString(TruncationMarker)
	b.WriteString(string(r[len(r)-tail:]))
	return b.String(), true
}

// Normalize clamps the texts and tool outputs of steps to cfg's limits,
// drops steps with no text and no tool call (whitespace counts as empty),
// and drops a step identical (before clamping) to the one kept before it. Truncated is set on
// steps whose text was cut.
func Normalize(steps []Step, cfg Config) []Step {
	cfg = cfg.withDefaults()
	out := make([]Step, 0, len(steps))
	var prev *Step // the step last kept, before clamping
	for i := range steps {
		st := steps[i]
		var cut, c bool
		st.UserText, c = Clamp(st.UserText, cfg.MaxTextChars)
		cut = cut || c
		st.AgentText, c = Clamp(st.AgentText, cfg.MaxTextChars)
		cut = cut || c
		if len(st.ToolCalls) > 0 {
			calls := make([]imprint.ToolCall, len(st.ToolCalls))
			for i, tc := range st.ToolCalls {
				tc.Output, c = Clamp(tc.Output, cfg.MaxToolOutputChars)
				cut = cut || c
				tc.Error, c = Clamp(tc.Error, cfg.MaxToolOutputChars)
				cut = cut || c
				calls[i] = tc
			}
			st.ToolCalls = calls
		}
		st.Truncated = st.Truncated || cut
		if strings.TrimSpace(st.UserText) == "" && strings.TrimSpace(st.AgentText) == "" && len(st.ToolCalls) == 0 {
			continue
		}
		// Identity is judged on the texts as given: two steps whose
		// clamped texts agree may still differ in the middle.
		if prev != nil && sameStep(*prev, steps[i]) {
			continue
		}
		prev = &steps[i]
		out = append(out, st)
	}
	return out
}

func sameStep(a, b Step) bool {
	if a.UserText != b.UserText || a.AgentText != b.AgentText || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		x, y := a.ToolCalls[i], b.ToolCalls[i]
		if x.Name != y.Name || x.Output != y.Output || x.Error != y.Error || !bytes.Equal(bytes.TrimSpace(x.Input), bytes.TrimSpace(y.Input)) {
			return false
		}
	}
	return true
}
