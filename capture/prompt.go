package capture

import (
	"bytes"
	"embed"
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/promptguard"
)

// Ops of the capture prompts; the version is part of the name and changes
// with the prompt's meaning.
const (
	OpSynth = "capture.reflection.synth.v1"
	OpAlpha = "capture.alpha.v1"
	OpBatch = "capture.batch.v1"
)

// Prompt field limits, in runes.
const (
	promptStateChars      = 1200
	promptActionChars     = 1500
	promptToolInputChars  = 200
	promptToolOutputChars = 300
	promptOutcomeChars    = 600
	taskPartChars         = 500
	taskContextChars      = 1200
	previewChars          = 400
	maxTaskTools          = 12
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

var (
	synthSystem = mustRead("prompts/synth.system.tmpl")
	alphaSystem = mustRead("prompts/alpha.system.tmpl")
	batchSystem = mustRead("prompts/batch.system.tmpl")
	userTmpl    = template.Must(template.New("").Option("missingkey=error").ParseFS(promptFS, "prompts/*.user.tmpl"))
)

func mustRead(name string) string {
	b, err := promptFS.ReadFile(name)
	if err != nil {
		// The files are embedded at build time; a missing one is a build error.
		panic(fmt.Sprintf("capture: embedded prompt %s: %v", name, err))
	}
	return strings.TrimSpace(string(b))
}

// captureQuoter quotes the lines of an episode's text that read as the
// sections of the per-step prompts or the labels of their previews, so
// that what a user, the agent or a tool wrote cannot forge a section (a
// second OUTCOME:, a REFLECTION: of its own).
var captureQuoter = promptguard.NewQuoter("TASK", "STATE", "ACTION", "TOOLS", "OUTCOME", "DOWNSTREAM", "REFLECTION",
	"agent", "output", "reflection", "final reply", "tools used", "task reward", "error", "the user then wrote")

// quoted is episode text as the prompts show it (captureQuoter).
func quoted(s string) string { return captureQuoter.Quote(s) }

// stepView is what the per-step prompts show of a step.
type stepView struct {
	Task       string
	State      string
	Action     string
	Tools      string
	Outcome    string
	Downstream string
	Reflection string
}

func render(name string, v stepView) (string, error) {
	var b bytes.Buffer
	if err := userTmpl.ExecuteTemplate(&b, name, v); err != nil {
		return "", fmt.Errorf("render %s: %w", name, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// clip cuts s to n runes, marking the cut with "…".
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}

// viewOf builds the prompt view of steps[i]; the next step's state stands in
// for the outcome of a step without tool calls.
func viewOf(steps []Step, i int, task string) stepView {
	st := steps[i]
	return stepView{
		Task:    orNone(task),
		State:   orNone(quoted(clip(st.UserText, promptStateChars))),
		Action:  orNone(quoted(clip(st.AgentText, promptActionChars))),
		Tools:   orNone(toolLines(st.ToolCalls)),
		Outcome: outcome(steps, i),
	}
}

func toolLines(calls []imprint.ToolCall) string {
	var b strings.Builder
	for i, tc := range calls {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "- %s(%s) -> %s", imprint.OneLine(tc.Name), quoted(clip(string(tc.Input), promptToolInputChars)),
			orNone(quoted(clip(tc.Output, promptToolOutputChars))))
		if e := strings.TrimSpace(tc.Error); e != "" {
			fmt.Fprintf(&b, " [error: %s]", quoted(clip(e, promptToolOutputChars)))
		}
	}
	return b.String()
}

// outcome says what came of steps[i]: its last tool call's result, else the
// user's next message, else that it ended the episode.
func outcome(steps []Step, i int) string {
	st := steps[i]
	if n := len(st.ToolCalls); n > 0 {
		tc := st.ToolCalls[n-1]
		var s string
		if e := strings.TrimSpace(tc.Error); e != "" {
			code := ""
			if tc.ErrorCode != "" {
				code = "[" + imprint.OneLine(tc.ErrorCode) + "]"
			}
			s = "ERROR" + code + ": " + quoted(e) + "\n"
		}
		return clip(s+orNone(quoted(tc.Output)), promptOutcomeChars)
	}
	if i+1 < len(steps) && strings.TrimSpace(steps[i+1].UserText) != "" {
		return clip("the user then wrote: "+quoted(steps[i+1].UserText), promptOutcomeChars)
	}
	return "(the episode ended after this reply)"
}

// taskContext summarizes the episode for every scoring prompt: the request,
// the final reply, the tools used and the reward when known. "" when the
// episode says nothing of these.
func taskContext(ep imprint.Episode, steps []Step) string {
	var parts []string
	for _, st := range steps {
		if s := strings.TrimSpace(st.UserText); s != "" {
			parts = append(parts, "Task: "+quoted(clip(s, taskPartChars)))
			break
		}
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(steps[i].AgentText); s != "" {
			parts = append(parts, "Final reply: "+quoted(clip(s, taskPartChars)))
			break
		}
	}
	var tools []string
	seen := map[string]bool{}
	for _, st := range steps {
		for _, tc := range st.ToolCalls {
			if !seen[tc.Name] && len(tools) < maxTaskTools {
				seen[tc.Name] = true
				tools = append(tools, imprint.OneLine(tc.Name))
			}
		}
	}
	if len(tools) > 0 {
		parts = append(parts, "Tools used: "+strings.Join(tools, ", "))
	}
	if ep.Meta.Reward != nil {
		parts = append(parts, "Task reward: "+strconv.FormatFloat(*ep.Meta.Reward, 'g', -1, 64))
	}
	return clip(strings.Join(parts, "\n"), taskContextChars)
}

// previews renders, for every step, up to count following steps (labels
// step+1..step+count). Only reflections that existed before any LLM call
// (existing[i]) appear, so the previews never depend on this run's results
// and the per-step work stays parallel.
func previews(steps []Step, existing []string, count int) []string {
	count = min(max(count, 0), MaxDownstreamSteps)
	out := make([]string, len(steps))
	for i := range steps {
		var blocks []string
		for off := 1; off <= count && i+off < len(steps); off++ {
			blocks = append(blocks, preview(steps[i+off], existing[i+off], off))
		}
		out[i] = strings.Join(blocks, "\n\n")
	}
	return out
}

func preview(st Step, reflection string, off int) string {
	var b strings.Builder
	if len(st.ToolCalls) == 0 {
		fmt.Fprintf(&b, "[step+%d] reply\n", off)
		if s := strings.TrimSpace(st.UserText); s != "" {
			fmt.Fprintf(&b, "user: %s\n", quoted(clip(s, previewChars/2)))
		}
		fmt.Fprintf(&b, "agent: %s", orNone(quoted(clip(st.AgentText, previewChars/2))))
	} else {
		names := make([]string, len(st.ToolCalls))
		var outs []string
		for j, tc := range st.ToolCalls {
			names[j] = imprint.OneLine(tc.Name)
			o := orNone(quoted(strings.TrimSpace(tc.Output)))
			if e := strings.TrimSpace(tc.Error); e != "" {
				o = "ERROR: " + quoted(e)
			}
			outs = append(outs, names[j]+": "+o)
		}
		fmt.Fprintf(&b, "[step+%d] tool use: %s\n", off, strings.Join(names, ", "))
		fmt.Fprintf(&b, "output: %s", clip(strings.Join(outs, "\n"), previewChars))
	}
	if reflection != "" {
		fmt.Fprintf(&b, "\nreflection: %s", quoted(clip(reflection, previewChars/2)))
	}
	return b.String()
}
