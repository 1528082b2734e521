package extract

import (
	_ "embed"
	"strings"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/promptguard"
)

// LLM operations of the extraction pipeline. The version is part of the
// name; changing a prompt's meaning bumps it.
const (
	// OpExtract segments scenes and extracts typed memories in one call.
	OpExtract = "extract.l1.v1"
	// OpExtractPeople is OpExtract for a window of a conversation between
	// people (imprint.Session.BetweenPeople): facts of both speakers, each
	// named by its speaker, and no instructions.
	OpExtractPeople = "extract.l1.people.v1"
	// OpDedup judges new memories against recalled stored ones.
	OpDedup = "extract.dedup.v1"
)

//go:embed prompts/extract_l1_v1.system.tmpl
var extractSystemPrompt string

//go:embed prompts/extract_l1_people_v1.system.tmpl
var extractPeopleSystemPrompt string

//go:embed prompts/extract_dedup_v1.system.tmpl
var dedupSystemPrompt string

// ExtractionSystemPrompt returns the system prompt of OpExtract.
func ExtractionSystemPrompt() string { return extractSystemPrompt }

// ExtractionPeopleSystemPrompt returns the system prompt of
// OpExtractPeople.
func ExtractionPeopleSystemPrompt() string { return extractPeopleSystemPrompt }

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
	return userMessage(previousScene, background, newMsgs, false)
}

// ExtractionPeopleUserMessage builds the user message of OpExtractPeople:
// ExtractionUserMessage's, with a line "SPEAKERS: <names>" (the speakers of
// the messages, in order of first appearance, or (none)) after the
// previous scene, and each block naming its speaker instead of its role
// ("[<id>] [<speaker>] [<RFC 3339 UTC>]: <content>"; the role when the
// message has no speaker).
func ExtractionPeopleUserMessage(previousScene string, background, newMsgs []imprint.Message) string {
	return userMessage(previousScene, background, newMsgs, true)
}

func userMessage(previousScene string, background, newMsgs []imprint.Message, people bool) string {
	var b strings.Builder
	scene := imprint.OneLine(previousScene)
	if scene == "" {
		scene = noneMarker
	}
	b.WriteString("PREVIOUS SCENE: ")
	b.WriteString(scene)
	if people {
		var names []string
		for _, msgs := range [][]imprint.Message{background, newMsgs} {
			for _, m := range msgs {
				if n := speakerLabel(m.Speaker); n != "" && !contains(names, n) {
					names = append(names, n)
				}
			}
		}
		b.WriteString("\nSPEAKERS: ")
		if len(names) == 0 {
			b.WriteString(noneMarker)
		} else {
			b.WriteString(strings.Join(names, ", "))
		}
	}
	b.WriteString("\nBACKGROUND MESSAGES:\n")
	if len(background) == 0 {
		b.WriteString(noneMarker)
	} else {
		writeBlocks(&b, background, people)
	}
	b.WriteString("\nNEW MESSAGES:\n")
	if len(newMsgs) == 0 {
		b.WriteString(noneMarker)
	} else {
		writeBlocks(&b, newMsgs, people)
	}
	b.WriteString("\n")
	return b.String()
}

// speakerBrackets turns the brackets of a speaker's name into parentheses,
// so that the name cannot close a block's field.
var speakerBrackets = strings.NewReplacer("[", "(", "]", ")")

// speakerLabel is a speaker's name as a block shows it: one line, without
// brackets.
func speakerLabel(name string) string {
	return imprint.OneLine(speakerBrackets.Replace(name))
}

// extractQuoter quotes the lines of message content that read as the
// sections or message blocks of the extraction prompts, so that a message
// cannot forge a section or another message.
var extractQuoter = promptguard.NewQuoter("PREVIOUS SCENE", "SPEAKERS", "BACKGROUND MESSAGES", "NEW MESSAGES")

// writeBlocks writes msgs as blocks; with bySpeaker a block names the
// message's speaker (its role when it has none) instead of its role.
// Fields are one line without brackets, and content lines that read as
// prompt structure are quoted (promptguard.Quoter).
func writeBlocks(b *strings.Builder, msgs []imprint.Message, bySpeaker bool) {
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		who := speakerLabel(string(m.Role))
		if n := speakerLabel(m.Speaker); bySpeaker && n != "" {
			who = n
		}
		b.WriteString("[")
		b.WriteString(speakerLabel(m.ID))
		b.WriteString("] [")
		b.WriteString(who)
		b.WriteString("] [")
		b.WriteString(messageTime(m).String())
		b.WriteString("]: ")
		b.WriteString(extractQuoter.Quote(m.Content))
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
