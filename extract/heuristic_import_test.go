package extract

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/record"
)

// importedMemory is a memory of a heuristic import with the message it
// came from.
type importedMemory struct {
	imprint.Memory
	source imprint.Message
}

// heuristicImport records the transcripts as imprint import does (a
// session marked between people when its transcript is), extracts them
// without an LLM, and returns the live memories, oldest source first.
func heuristicImport(t *testing.T, trs []importer.Transcript) []importedMemory {
	t.Helper()
	ctx := t.Context()
	db := openDB(t)
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	var sessions []record.Session
	var ids []string
	for _, tr := range trs {
		sessions = append(sessions, record.Session{SessionID: tr.SessionID, Messages: tr.Messages, BetweenPeople: tr.BetweenPeople})
		ids = append(ids, tr.SessionID)
	}
	if _, err := record.NewRecorder(record.Deps{Store: db}, record.Config{}).RecordMany(ctx, scope, sessions); err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Deps{Store: db}, DefaultConfig())
	if err := r.ExtractSessions(ctx, scope, ids, nil, func(sid string, err error) { t.Errorf("extract %s: %v", sid, err) }); err != nil {
		t.Fatal(err)
	}
	mems, err := db.ListMemories(ctx, scope, imprint.MemoryFilter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]importedMemory, 0, len(mems))
	for _, m := range mems {
		src, err := db.GetMessage(ctx, scope, m.SessionID, m.SourceMessageIDs[0])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, importedMemory{Memory: m, source: src})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].source.Seq < out[j].source.Seq })
	return out
}

func readTranscripts(t *testing.T, rel string, read func(f *os.File, path string) ([]importer.Transcript, error)) []importer.Transcript {
	t.Helper()
	path := testfiles.Path(t, rel)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	trs, err := read(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return trs
}

func readLoCoMo(t *testing.T) []importer.Transcript {
	return readTranscripts(t, "locomo/locomo-2conv.json", func(f *os.File, path string) ([]importer.Transcript, error) {
		return importer.ReadLoCoMo(f, path, nil)
	})
}

func readTauBench(t *testing.T) []importer.Transcript {
	return readTranscripts(t, "tau-bench/airline-40.json", func(f *os.File, path string) ([]importer.Transcript, error) {
		return importer.ReadTauBench(f, path)
	})
}

// TestHeuristicLoCoMoBetweenPeople imports the two LoCoMo conversations,
// which are between people: both speakers' messages give memories, each
// memory names the person who said it (never a bare "User"), and none is
// an instruction. Imported without the marker, as before, only the first
// speaker's messages would count.
func TestHeuristicLoCoMoBetweenPeople(t *testing.T) {
	t.Parallel()
	trs := readLoCoMo(t)
	mems := heuristicImport(t, trs)
	bySpeaker := map[string]int{}
	for _, m := range mems {
		sp := m.source.Speaker
		bySpeaker[sp]++
		if m.Type == imprint.MemoryInstruction {
			t.Errorf("instruction from a conversation between people: %q (%s)", m.Content, m.source.ID)
		}
		if !strings.Contains(m.Content, sp) || regexp.MustCompile(`\bUser\b`).MatchString(m.Content) {
			t.Errorf("memory of %s's message %s does not name them: %q", sp, m.source.ID, m.Content)
		}
	}
	t.Logf("%d memories, by speaker: %v", len(mems), bySpeaker)
	for _, sp := range []string{"Caroline", "Melanie", "Jon", "Gina"} {
		// Each speaker says dozens of things worth keeping.
		if bySpeaker[sp] < 15 {
			t.Errorf("%s: %d memories, want at least 15 (both sides are extracted)", sp, bySpeaker[sp])
		}
	}

	for i := range trs {
		trs[i].BetweenPeople = false
	}
	for _, m := range heuristicImport(t, trs) {
		if m.source.Role != imprint.RoleUser {
			t.Fatalf("unmarked import: memory %q from an assistant message", m.Content)
		}
	}
}

// grammarRules are simple subject–verb agreement and pronoun rules a
// third-person memory must keep.
var grammarRules = []struct {
	name string
	re   *regexp.Regexp
}{
	{"they with a singular verb", regexp.MustCompile(`(?i)\bthey (?:is|was|has|does|doesn't|hasn't|wasn't|isn't)\b`)},
	{"he or she with a plural verb", regexp.MustCompile(`(?i)\b(?:he|she) (?:are|were|have|do|don't|haven't|weren't|aren't)\b`)},
	{"first-person I left", regexp.MustCompile(`(?:^|[^\w'])I(?:'m|'ve|'d|'ll)?(?:$|[^\w'])`)},
	{"first-person my/me left", regexp.MustCompile(`(?i)\b(?:my|me|mine|myself|our|ours|ourselves)\b`)},
	{"first-person we/us left", regexp.MustCompile(`\b(?:we|We|us)\b`)},
}

// grammarProblems returns the rules content breaks; names are the
// speakers' names, which take singular verbs.
func grammarProblems(content string, names []string) []string {
	var out []string
	for _, r := range grammarRules {
		if r.re.MatchString(content) {
			out = append(out, r.name)
		}
	}
	for _, n := range names {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + ` (?:are|were|have|do|don't|haven't|weren't|aren't|am)\b`).MatchString(content) {
			out = append(out, n+" with a plural verb")
		}
	}
	return out
}

// TestGrammarRulesCatch checks the rules on the sentences that broke them
// before they were fixed, and on their fixed forms.
func TestGrammarRulesCatch(t *testing.T) {
	t.Parallel()
	names := []string{"Caroline", "User"}
	for _, bad := range []string{
		"User is meeting so many cool people who are as passionate as they is about rights.",
		"User started looking into counseling, so they could help others like they was helped.",
		"Caroline are going to a conference.", "He are happy.", "Caroline said I'm fine.",
		"Caroline loves my dog.", "Caroline and others think we should go.",
	} {
		if len(grammarProblems(bad, names)) == 0 {
			t.Errorf("grammarProblems(%q) finds nothing", bad)
		}
	}
	for _, good := range []string{
		"Caroline is meeting people who are as passionate as they are about rights.",
		"Caroline and others are going camping in the US.", "Standing instruction from the user: always use tabs.",
	} {
		if p := grammarProblems(good, names); len(p) > 0 {
			t.Errorf("grammarProblems(%q) = %v", good, p)
		}
	}
}

// TestHeuristicImportGrammar checks every heuristic memory of the LoCoMo
// (between people) and τ-bench (user and assistant) imports against the
// grammar rules.
func TestHeuristicImportGrammar(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		trs  func(*testing.T) []importer.Transcript
	}{{"locomo", readLoCoMo}, {"tau-bench", readTauBench}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mems := heuristicImport(t, tc.trs(t))
			names := []string{"User"} // the subject of an unnamed speaker's memories
			for _, m := range mems {
				if sp := m.source.Speaker; sp != "" && !contains(names, sp) {
					names = append(names, sp)
				}
			}
			var bad []string
			for _, m := range mems {
				if p := grammarProblems(m.Content, names); len(p) > 0 {
					bad = append(bad, fmt.Sprintf("%s: %q: %s", m.source.ID, m.Content, strings.Join(p, ", ")))
				}
			}
			if len(mems) < 40 {
				t.Fatalf("%d memories: too few to check", len(mems))
			}
			if len(bad) > 0 {
				t.Errorf("%d of %d memories break the grammar rules:\n%s", len(bad), len(mems), strings.Join(bad, "\n"))
			}
		})
	}
}
