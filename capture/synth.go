package capture

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// NoReflection is the reply by which the synthesis prompt declines.
const NoReflection = "NO_REFLECTION"

const (
	synthMaxTokens   = 400
	synthTemperature = 0.2
)

var thinkBlock = regexp.MustCompile(`(?is)<think(?:ing)?>.*?</think(?:ing)?>`)

// synthesize asks m to write the reflection of steps[i] (op
// capture.reflection.synth.v1). It returns "" when the model declines with
// NoReflection or answers nothing; errors are the LLM's.
func synthesize(ctx context.Context, m imprint.LLM, steps []Step, i int, task, downstream string) (string, error) {
	v := viewOf(steps, i, task)
	v.Downstream = downstream
	user, err := render("synth.user.tmpl", v)
	if err != nil {
		return "", err
	}
	resp, err := m.Complete(ctx, imprint.LLMRequest{
		Op:          OpSynth,
		System:      synthSystem,
		Messages:    []imprint.ChatMessage{{Role: "user", Content: user}},
		MaxTokens:   synthMaxTokens,
		Temperature: synthTemperature,
	})
	if err != nil {
		return "", fmt.Errorf("synthesize reflection of step %s: %w", steps[i].Key, err)
	}
	return cleanSynth(resp.Text), nil
}

// cleanSynth strips hidden thinking and a declining sentinel from a
// synthesized reflection and caps its length.
func cleanSynth(s string) string {
	s = strings.TrimSpace(thinkBlock.ReplaceAllString(s, ""))
	if isNoReflection(s) {
		return ""
	}
	return capReflection(s)
}

// isNoReflection reports whether s is the sentinel, allowing quotes and
// trailing punctuation around it.
func isNoReflection(s string) bool {
	s = strings.Trim(strings.TrimSpace(s), "\"'`.!。 \t\n")
	return strings.EqualFold(s, NoReflection)
}
