package capture

import (
	"regexp"
	"strings"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
)

// Reflection length bounds, in runes: shorter extracted text is not a
// reflection; longer text is cut.
const (
	MinReflectionChars = 10
	MaxReflectionChars = 1500
)

// headingKeywords are the Markdown section titles whose body is a reflection.
var headingKeywords = map[string]bool{
	"reasoning": true, "rationale": true, "why": true,
	"思考": true, "思考过程": true, "我的理由": true,
}

var (
	// "## Reasoning", "### Why:", "## 思考过程：" alone on a line.
	headingLine = regexp.MustCompile(`^[ ]{0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$`)
	tagBlock    = regexp.MustCompile(`(?is)<reflection>(.*?)</reflection>`)
	// A label at the start of a line (optionally bold or bulleted).
	inlineLabel = regexp.MustCompile(`(?im)^[ \t]*(?:[-*][ \t]+)?(?:\*\*)?(?:reflection|reasoning|rationale)(?:\*\*)?[ \t]*[:：](?:\*\*)?`)
	zhWhy       = regexp.MustCompile(`我(?:这么|这样)做的?(?:原因|理由)(?:是|[:：])?`)
	zhProcess   = regexp.MustCompile(`思考过程(?:如下)?[ \t]*[:：]?`)
)

// ResolveReflection returns the reflection of st that needs no LLM: the
// adapter's (turn meta) first, else one extracted from the agent text, with
// its source; ReflectionNone and "" when there is none.
func ResolveReflection(st Step) (string, imprint.ReflectionSource) {
	if s := strings.TrimSpace(st.RawReflection); s != "" {
		return capReflection(s), imprint.ReflectionAdapter
	}
	if s := ExtractReflection(st.AgentText); s != "" {
		return s, imprint.ReflectionExtracted
	}
	return "", imprint.ReflectionNone
}

// ExtractReflection finds a reflection the agent wrote in text: a Markdown
// "##"/"###" section titled Reasoning, Rationale, Why, 思考, 思考过程 or
// 我的理由 (up to the next heading or blank line); a <reflection> block; a
// line starting with "Reflection:", "Reasoning:" or "Rationale:" (to the next
// heading); or the Chinese "我这么做的原因/理由" and "思考过程" phrasings. The
// first that yields at least MinReflectionChars wins, cut to
// MaxReflectionChars. It returns "" when none does.
func ExtractReflection(text string) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	for _, find := range []func(string) string{headingSection, tagSection, inlineSection, zhWhySection, zhProcessSection} {
		if s := strings.TrimSpace(find(text)); utf8.RuneCountInString(s) >= MinReflectionChars {
			return capReflection(s)
		}
	}
	return ""
}

func capReflection(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= MaxReflectionChars {
		return s
	}
	return strings.TrimSpace(string([]rune(s)[:MaxReflectionChars]))
}

// isHeading reports whether line is a Markdown ATX heading ("## Title")
// and returns its level and title.
func isHeading(line string) (level int, title string, ok bool) {
	m := headingLine.FindStringSubmatch(line)
	if m == nil {
		return 0, "", false
	}
	return len(m[1]), strings.TrimSpace(m[2]), true
}

func headingSection(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		level, title, ok := isHeading(l)
		if !ok || level < 2 || level > 3 || !headingKeywords[strings.ToLower(strings.TrimSpace(strings.TrimRight(title, ":：")))] {
			continue
		}
		var body []string
		for _, next := range lines[i+1:] {
			if _, _, h := isHeading(next); h {
				break
			}
			if strings.TrimSpace(next) == "" {
				if len(body) > 0 {
					break
				}
				continue
			}
			body = append(body, next)
		}
		if s := strings.Join(body, "\n"); utf8.RuneCountInString(strings.TrimSpace(s)) >= MinReflectionChars {
			return s
		}
	}
	return ""
}

func tagSection(text string) string {
	for _, m := range tagBlock.FindAllStringSubmatch(text, -1) {
		if utf8.RuneCountInString(strings.TrimSpace(m[1])) >= MinReflectionChars {
			return m[1]
		}
	}
	return ""
}

func inlineSection(text string) string {
	for _, loc := range inlineLabel.FindAllStringIndex(text, -1) {
		if s := untilHeading(text[loc[1]:]); utf8.RuneCountInString(strings.TrimSpace(s)) >= MinReflectionChars {
			return s
		}
	}
	return ""
}

func zhWhySection(text string) string {
	if loc := zhWhy.FindStringIndex(text); loc != nil {
		return untilHeading(text[loc[1]:])
	}
	return ""
}

func zhProcessSection(text string) string {
	if loc := zhProcess.FindStringIndex(text); loc != nil {
		return untilHeading(text[loc[1]:])
	}
	return ""
}

// untilHeading returns s up to its first Markdown heading line.
func untilHeading(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if i > 0 {
			if _, _, h := isHeading(l); h {
				return strings.Join(lines[:i], "\n")
			}
		}
	}
	return s
}
