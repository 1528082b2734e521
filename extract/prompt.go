package extract

import (
	_ "embed"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// LLM operations of the extraction pipeline. The version is part of the
// name; changing a prompt's meaning bumps it.
const (
	// OpExtract segments scenes and extracts typed memories in one call.
	OpExtract = "extract.l1.v1"
	// OpDedup judges new memories against recalled stored ones.
	OpDedup = "extract.dedup.v1"
)

//go:embed prompts/extract_l1_v1.system.tmpl
var extractSystemPrompt string

//go:embed prompts/extract_dedup_v1.system.tmpl
var dedupSystemPrompt string

// ExtractionSystemPrompt returns the system prompt of OpExtract.
func ExtractionSystemPrompt() string { return extractSystemPrompt }

// DedupSystemPrompt returns the system prompt of OpDedup.
func DedupSystemPrompt() string { return dedupSystemPrompt }

const noneMarker = "(none)"

// ExtractionUserMessage builds the user message of OpExtract: a line
// "PREVIOUS SCENE: <name or (none)>", a line "BACKGROUND MESSAGES:" followed
// by the background messages or "(none)", and a line "NEW MESSAGES:"
// followed by the new messages. Each message is one block
// "[<id>] [<role>] [<RFC 3339 UTC>]: <content>"; blocks are separated by a
// blank line.
func ExtractionUserMessage(previousScene string, background, newMsgs []imprint.Message) string {
	var b strings.Builder
	scene := strings.Join(strings.Fields(previousScene), " ")
	if scene == "" {
		scene = noneMarker
	}
	b.WriteString("PREVIOUS SCENE: ")
	b.WriteString(scene)
	b.WriteString("\nBACKGROUND MESSAGES:\n")
	if len(background) == 0 {
		b.WriteString(noneMarker)
	} else {
		writeBlocks(&b, background)
	}
	b.WriteString("\nNEW MESSAGES:\n")
	if len(newMsgs) == 0 {
		b.WriteString(noneMarker)
	} else {
		writeBlocks(&b, newMsgs)
	}
	b.WriteString("\n")
	return b.String()
}

func writeBlocks(b *strings.Builder, msgs []imprint.Message) {
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("[")
		b.WriteString(m.ID)
		b.WriteString("] [")
		b.WriteString(string(m.Role))
		b.WriteString("] [")
		b.WriteString(messageTime(m).String())
		b.WriteString("]: ")
		b.WriteString(m.Content)
	}
}

// messageTime is when a message was said: its timestamp, else when it was
// recorded.
func messageTime(m imprint.Message) imprint.Time {
	if !m.Timestamp.IsZero() {
		return imprint.At(m.Timestamp.Time)
	}
	return imprint.At(m.RecordedAt.Time)
}
