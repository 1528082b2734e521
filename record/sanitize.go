package record

import (
	"regexp"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// injectedTags are the blocks of memory context that imprint and agent
// hosts put into prompts (including the persona, scene and tool-guide
// blocks of memory plugins built like the reference system). Recording them
// as user speech would feed recalled memories back into extraction as if
// the user had said them again.
var injectedTags = []string{
	"relevant-memories", "imprint-recall", "memory-context", "system-reminder",
	"user-persona", "relevant-scenes", "scene-navigation", "memory-tools-guide",
}

var injectedBlocks = func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, tag := range injectedTags {
		// (?is): case-insensitive, and . spans lines. The opening tag may
		// carry attributes; the body is matched lazily so two blocks with
		// user text between them do not swallow that text.
		out = append(out, regexp.MustCompile(`(?is)<`+tag+`(?:\s[^>]*)?>.*?</`+tag+`\s*>`))
	}
	return out
}()

var blankRuns = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

// Sanitize returns s as L0 keeps it: invalid UTF-8 and control characters
// other than newline and tab removed (so "\r\n" becomes "\n"), complete
// injected-context blocks (injectedTags: <relevant-memories>,
// <imprint-recall>, <memory-context>, <system-reminder>, <user-persona>,
// <relevant-scenes>, <scene-navigation>, <memory-tools-guide>) removed (any case, spanning lines, with or
// without attributes), runs of blank lines collapsed to one, and the result trimmed. An
// unclosed tag is left alone: without its end, what follows may be the
// user's own text.
func Sanitize(s string) string {
	// Control characters go first (imprint.CleanText), so none can hide a
	// tag from the block patterns.
	s = imprint.CleanText(s)
	// The blocks are rare; skip the regexps when none can match. Removing
	// one block can join the halves of another around it, so repeat
	// (boundedly) until nothing changes.
	for pass := 0; pass < 8 && strings.Contains(s, "</"); pass++ {
		before := s
		for _, re := range injectedBlocks {
			s = re.ReplaceAllString(s, "")
		}
		if s == before {
			break
		}
	}
	s = blankRuns.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}
