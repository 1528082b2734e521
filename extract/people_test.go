package extract

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

func TestExtractionPeopleUserMessageGolden(t *testing.T) {
	t.Parallel()
	bg := []imprint.Message{
		{ID: "conv-26:D1:1", Role: imprint.RoleUser, Speaker: "Caroline", Content: "Hey Mel! Good to see you!",
			Timestamp: imprint.At(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC))},
	}
	newMsgs := []imprint.Message{
		{ID: "conv-26:D1:2", Role: imprint.RoleAssistant, Speaker: "Melanie", Content: "Hey Caroline! I'm swamped with the kids & work.",
			Timestamp: imprint.At(time.Date(2023, 5, 8, 13, 56, 1, 0, time.UTC))},
		{ID: "conv-26:D1:3", Role: imprint.RoleUser, Speaker: "Caroline", Content: "I went to a LGBTQ support group yesterday and it was so powerful.",
			Timestamp: imprint.At(time.Date(2023, 5, 8, 13, 56, 2, 0, time.UTC))},
		{ID: "x:4", Role: imprint.RoleAssistant, Content: "A message without a speaker [name].",
			Timestamp: imprint.At(time.Date(2023, 5, 8, 13, 56, 3, 0, time.UTC))},
	}
	golden(t, "extract_people_window.golden", ExtractionPeopleUserMessage("Catching up", bg, newMsgs))
	// With no speaker at all the line says so.
	got := ExtractionPeopleUserMessage("", nil, newMsgs[2:])
	if !strings.Contains(got, "\nSPEAKERS: (none)\n") || !strings.Contains(got, "[x:4] [assistant] [") {
		t.Errorf("no speakers:\n%s", got)
	}
}

func TestPeopleSystemPromptStatesTheRules(t *testing.T) {
	t.Parallel()
	sys := ExtractionPeopleSystemPrompt()
	for _, want := range []string{
		"two people", "SPEAKERS", "PREVIOUS SCENE", "BACKGROUND MESSAGES", "NEW MESSAGES", "[id] [speaker] [UTC time]",
		"persona", "episodic", "Never extract an instruction", "by name", "activity_start_time", `"scenes"`,
		`"source_message_ids"`, "language",
	} {
		if !strings.Contains(sys, want) {
			t.Errorf("people extraction system prompt lacks %q", want)
		}
	}
	if sys == ExtractionSystemPrompt() {
		t.Error("people prompt is the user/assistant prompt")
	}
}

// A session marked between people is extracted with OpExtractPeople: the
// window names the speakers, and an instruction the model returns anyway
// is dropped with a warning. A session of the same scope that is not
// marked still gets OpExtract.
func TestExtractBetweenPeopleUsesPeoplePrompt(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, DefaultConfig())
	if err := e.db.MarkBetweenPeople(e.ctx, e.scope, "conv"); err != nil {
		t.Fatal(err)
	}
	at := imprint.At(e.baseDay)
	if _, err := e.db.AppendMessages(e.ctx, e.scope, "conv", []imprint.Message{
		{ID: "c1", Role: imprint.RoleUser, Speaker: "Maria", Content: "I donated my old car to a homeless shelter yesterday.", Timestamp: at},
		{ID: "c2", Role: imprint.RoleAssistant, Speaker: "John", Content: "From now on, always tell me about your volunteering!", Timestamp: at},
	}); err != nil {
		t.Fatal(err)
	}
	e.record("agent", e.baseDay, "remember: The user is a pilot.")
	e.srv.Handle(OpExtractPeople, func(r llmtest.Request) llmtest.Reply {
		p := parsePeoplePrompt(t, r.User)
		return scenesReply(scene{Name: "Volunteering", IDs: p.newIDs(), Memories: []mem{
			{Content: "On 30 April 2026 Maria donated her old car to a homeless shelter.", Type: "episodic", Priority: 70, Sources: []string{"c1"}},
			{Content: "John wants to hear about volunteering.", Type: "instruction", Priority: 80, Sources: []string{"c2"}},
		}})
	})
	e.srv.Handle(OpExtract, rememberExtractor(t, "Facts"))
	e.srv.Handle(OpDedup, judgeStoreAll)

	res, err := e.extractAll("conv")
	if err != nil {
		t.Fatal(err)
	}
	reqs := e.srv.RequestsFor(OpExtractPeople)
	if len(reqs) != 1 || len(e.srv.RequestsFor(OpExtract)) != 0 {
		t.Fatalf("%d people and %d user/assistant extraction calls, want 1 and 0", len(reqs), len(e.srv.RequestsFor(OpExtract)))
	}
	if reqs[0].System != ExtractionPeopleSystemPrompt() {
		t.Error("people window sent without the people system prompt")
	}
	for _, want := range []string{"\nSPEAKERS: Maria, John\n", "[c1] [Maria] [", "[c2] [John] ["} {
		if !strings.Contains(reqs[0].User, want) {
			t.Errorf("people window lacks %q:\n%s", want, reqs[0].User)
		}
	}
	if len(res) != 1 || !hasWarning(res[0], "parse", "instruction_between_people") {
		t.Errorf("results %+v, want one with a parse/instruction_between_people warning", res)
	}
	var got []string
	for _, m := range e.live() {
		got = append(got, string(m.Type)+": "+m.Content)
	}
	if d := cmp.Diff([]string{"episodic: On 30 April 2026 Maria donated her old car to a homeless shelter."}, got); d != "" {
		t.Errorf("stored memories (-want +got):\n%s", d)
	}

	if _, err := e.extractAll("agent"); err != nil {
		t.Fatal(err)
	}
	if n := len(e.srv.RequestsFor(OpExtract)); n != 1 {
		t.Errorf("unmarked session: %d OpExtract calls, want 1", n)
	}
}

// parsePeoplePrompt reads an OpExtractPeople user message back, after
// checking and dropping its SPEAKERS line.
func parsePeoplePrompt(t testing.TB, user string) parsedPrompt {
	t.Helper()
	first, rest, _ := strings.Cut(user, "\n")
	speakers, rest, _ := strings.Cut(rest, "\n")
	if !strings.HasPrefix(speakers, "SPEAKERS: ") {
		t.Fatalf("people prompt without a SPEAKERS line:\n%s", user)
	}
	// Blocks name speakers, not roles: read them as roles.
	rest = regexp.MustCompile(`(?m)^(\[[^\]]*\]) \[[^\]]*\] `).ReplaceAllString(rest, "$1 [user] ")
	return parsePrompt(t, first+"\n"+rest)
}

func hasWarning(r Result, stage, code string) bool {
	for _, w := range r.Warnings {
		if w.Stage == stage && w.Code == code {
			return true
		}
	}
	return false
}
