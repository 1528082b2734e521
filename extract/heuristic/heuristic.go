package heuristic

import (
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// Scene names. The rule-based extractor does not segment conversations; it
// files each memory under a fixed scene per type and language.
const (
	ScenePersona     = "About the user"
	SceneInstruction = "Standing instructions"
	SceneEpisodic    = "Events and plans"

	ScenePersonaZH     = "用户画像"
	SceneInstructionZH = "用户指令"
	SceneEpisodicZH    = "事件与计划"
)

// maxPerMessage bounds the memories taken from one message, so one
// long monologue does not flood the store.
const maxPerMessage = 3

// maxContent bounds a memory's content in runes.
const maxContent = 300

// Extract extracts memories from the user messages of newMsgs, a window
// of a conversation between a user and an AI assistant, without an LLM:
// explicit preferences and facts about the user (persona), standing
// instructions for the assistant (instruction) and dated or just-happened
// events and plans (episodic), in English and Chinese. It reads each
// sentence on its own; greetings, thanks, compliments, questions, idioms,
// advice, one-off requests and assistant messages yield nothing. An
// instruction needs a directive about the assistant's future behaviour
// ("from now on answer in English", "always show me the commands first").
// Content is a short third-person statement in the sentence's language
// naming the speaker: the message's Speaker, else "User" ("User prefers
// dark mode.", "用户喜欢猫。"). An episodic memory whose sentence names a
// relative day ("yesterday", "next Friday", "上周") gets
// metadata.activity_start_time, the UTC date (YYYY-MM-DD) that day falls on
// counted from the message's timestamp. The result is deterministic: the
// same messages give the same candidates, in message and sentence order,
// at most three per message. An instruction that asks for harm (see
// promptguard.InstructionHarm) is a candidate all the same: the Runner
// drops it, with a warning, as it does the model's.
func Extract(newMsgs []imprint.Message) []imprint.Candidate {
	return run(newMsgs, false)
}

// ExtractBetweenPeople is Extract for a window of a conversation
// between two people (imprint.Session.BetweenPeople): it reads the
// messages of both sides and attributes each memory to the person who
// said it, by the message's Speaker (else "User" for the user role and
// "The other person" for the other). Nothing is an instruction: there is
// no assistant to instruct. Episodic memories carry their date in the
// text, the relative time written out ("… on 7 May 2023", "… in the week
// before 9 June 2023"), else the day it was said ("… (said on 8 May
// 2023)"), so that each memory stands on its own.
func ExtractBetweenPeople(newMsgs []imprint.Message) []imprint.Candidate {
	return run(newMsgs, true)
}

func run(newMsgs []imprint.Message, people bool) []imprint.Candidate {
	var out []imprint.Candidate
	seen := map[string]bool{}
	var names map[imprint.Role]string
	if people {
		names = speakerNames(newMsgs)
	}
	for _, m := range newMsgs {
		if !people && m.Role != imprint.RoleUser {
			continue
		}
		sp := speakerOf(m, people)
		if people {
			sp.listener = names[otherRole(m.Role)]
		}
		n := 0
		for _, s := range splitSentences(m.Content) {
			if n == maxPerMessage {
				break
			}
			c, ok := extractSentence(s, sp)
			if !ok {
				continue
			}
			key := strings.ToLower(c.Content)
			if seen[key] {
				continue
			}
			seen[key] = true
			c.SourceMessageIDs = []string{m.ID}
			out = append(out, c)
			n++
		}
	}
	return out
}

// speaker is who said a message, as the heuristic writes about them.
type speaker struct {
	// name is the subject of the speaker's memories ("User", "Caroline").
	name string
	// named is set when name is the speaker's own name.
	named bool
	// listener is the other person's name in a conversation between
	// people, when known; a leading or trailing address to them is dropped.
	listener string
	// people is set in a conversation between people: no instructions,
	// dates written into episodic memories.
	people bool
	// ts is when the message was said.
	ts time.Time
}

// defaultSubject is the subject of a user message whose speaker is not
// known; defaultOther that of the other side's in a conversation between
// people.
const (
	defaultSubject = "User"
	defaultOther   = "The other person"
)

// speakerOf returns the speaker of m.
func speakerOf(m imprint.Message, people bool) speaker {
	sp := speaker{name: defaultSubject, people: people, ts: m.Timestamp.Time}
	if people && m.Role != imprint.RoleUser {
		sp.name = defaultOther
	}
	if name := imprint.OneLine(m.Speaker); name != "" {
		sp.name, sp.named = name, true
	}
	return sp
}

// speakerNames returns the first speaker name given for each role in msgs.
func speakerNames(msgs []imprint.Message) map[imprint.Role]string {
	names := map[imprint.Role]string{}
	for _, m := range msgs {
		if name := imprint.OneLine(m.Speaker); name != "" && names[m.Role] == "" {
			names[m.Role] = name
		}
	}
	return names
}

func otherRole(r imprint.Role) imprint.Role {
	if r == imprint.RoleUser {
		return imprint.RoleAssistant
	}
	return imprint.RoleUser
}

// possessive returns name's possessive form ("Caroline's").
func possessive(name string) string { return name + "'s" }

// extractSentence extracts at most one memory from one sentence said by
// sp. A shared photo's caption ("[shared photo: …]") is not something the
// speaker said.
func extractSentence(s sentence, sp speaker) (imprint.Candidate, bool) {
	if s.question || strings.HasPrefix(s.text, "[shared photo:") {
		return imprint.Candidate{}, false
	}
	if hasCJK(s.text) {
		return chineseSentence(s.text, sp)
	}
	return englishSentence(s.text, sp)
}
