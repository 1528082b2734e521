package importer

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/internal/testfiles"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

// sharedTestFile returns the path of a file in the repository's testdata
// folder.
func sharedTestFile(t testing.TB, rel string) string { return testfiles.Path(t, rel) }

// openFile opens path for the test.
func openFile(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func ts(s string) imprint.Time {
	p, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return imprint.At(p)
}

// roles lists the roles of an episode's turns, with "*" marking sub-agent
// turns, e.g. "user assistant tool *user".
func roles(ep imprint.Episode) string {
	var out []string
	for _, t := range ep.Turns {
		r := string(t.Role)
		if t.Meta.IsSubagent {
			r = "*" + r
		}
		out = append(out, r)
	}
	return strings.Join(out, " ")
}

// contents lists the contents of messages.
func contents(msgs []imprint.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+": "+m.Content)
	}
	return out
}

// toolTurns returns the tool turns of all episodes.
func toolTurns(eps []imprint.Episode) []imprint.Turn {
	var out []imprint.Turn
	for _, ep := range eps {
		for _, t := range ep.Turns {
			if t.Role == imprint.RoleTool {
				out = append(out, t)
			}
		}
	}
	return out
}

// warningLines returns the line numbers of warnings.
func warningLines(ws []Warning) []int {
	var out []int
	for _, w := range ws {
		out = append(out, w.Line)
	}
	return out
}

var uuidForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// checkTranscript checks what holds for every transcript: messages are
// non-blank user/assistant text with unique ids in the session, episodes
// have ids and turns, and every message is a turn of some episode.
func checkTranscript(t *testing.T, tr Transcript) {
	t.Helper()
	turnIDs := map[string]bool{}
	epIDs := map[string]bool{}
	for _, ep := range tr.Episodes {
		if ep.ID == "" || epIDs[ep.ID] {
			t.Errorf("episode id %q empty or repeated", ep.ID)
		}
		epIDs[ep.ID] = true
		if len(ep.Turns) == 0 {
			t.Errorf("episode %s has no turns", ep.ID)
		}
		if ep.SessionID != tr.SessionID {
			t.Errorf("episode session %q, transcript %q", ep.SessionID, tr.SessionID)
		}
		for _, turn := range ep.Turns {
			if turn.ID != "" {
				turnIDs[turn.ID] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, m := range tr.Messages {
		if m.Role != imprint.RoleUser && m.Role != imprint.RoleAssistant {
			t.Errorf("message %s has role %q", m.ID, m.Role)
		}
		if strings.TrimSpace(m.Content) == "" {
			t.Errorf("message %s is blank", m.ID)
		}
		if seen[m.ID] {
			t.Errorf("message id %s repeated", m.ID)
		}
		seen[m.ID] = true
		if !turnIDs[m.ID] {
			t.Errorf("message %s (%q) is no episode turn", m.ID, m.Content)
		}
		if m.SessionID != tr.SessionID {
			t.Errorf("message session %q, transcript %q", m.SessionID, tr.SessionID)
		}
	}
}

func TestBuildEpisodes(t *testing.T) {
	t.Parallel()
	u := func(c string) imprint.Turn { return imprint.Turn{Role: imprint.RoleUser, Content: c} }
	a := func(c string) imprint.Turn { return imprint.Turn{Role: imprint.RoleAssistant, Content: c} }
	tool := imprint.Turn{Role: imprint.RoleTool, Content: "out", Meta: imprint.TurnMeta{Name: "ls"}}
	sys := imprint.Turn{Role: imprint.RoleSystem, Content: "policy"}
	sub := imprint.Turn{Role: imprint.RoleUser, Content: "sub-task", Meta: imprint.TurnMeta{Depth: 1, IsSubagent: true}}
	tests := []struct {
		name  string
		turns []imprint.Turn
		want  []string
	}{
		{"one request", []imprint.Turn{u("hi"), a("hello")}, []string{"user assistant"}},
		{"two requests", []imprint.Turn{u("a"), a("b"), u("c"), a("d")}, []string{"user assistant", "user assistant"}},
		{"consecutive users stay together", []imprint.Turn{u("a"), u("b"), a("c")}, []string{"user user assistant"}},
		{"tool activity ends the request", []imprint.Turn{u("a"), a(""), tool, u("b")}, []string{"user assistant tool", "user"}},
		{"system turns are left out", []imprint.Turn{sys, u("a"), a("b")}, []string{"user assistant"}},
		{"sub-agent prompt does not split", []imprint.Turn{u("a"), a(""), tool, sub, a("x")}, []string{"user assistant tool *user assistant"}},
		{"leading assistant", []imprint.Turn{a("welcome"), u("a"), a("b")}, []string{"assistant", "user assistant"}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eps := BuildEpisodes("s", imprint.DefaultScope(), tt.turns, "test")
			var got []string
			for _, ep := range eps {
				got = append(got, roles(ep))
				if ep.ClosedBy != imprint.ClosedFinalized || ep.Meta.Source != "test" || ep.Scope != imprint.DefaultScope() {
					t.Errorf("episode fields: %+v", ep)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("episodes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildEpisodesIDs(t *testing.T) {
	t.Parallel()
	turns := []imprint.Turn{
		{Role: imprint.RoleUser, Content: "a", TS: ts("2026-01-01T10:00:00Z")},
		{Role: imprint.RoleAssistant, Content: "b", TS: ts("2026-01-01T10:00:05Z")},
		{Role: imprint.RoleUser, Content: "c", TS: ts("2026-01-01T10:01:00Z")},
	}
	first := BuildEpisodes("s", imprint.Scope{}, turns, "test")
	again := BuildEpisodes("s", imprint.Scope{}, turns, "test")
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("not deterministic:\n%s", diff)
	}
	// A longer transcript (the session went on) keeps the earlier ids.
	longer := BuildEpisodes("s", imprint.Scope{}, append(turns[:3:3], imprint.Turn{Role: imprint.RoleAssistant, Content: "d"}), "test")
	if first[0].ID != longer[0].ID || first[1].ID != longer[1].ID {
		t.Errorf("ids changed when the session grew")
	}
	other := BuildEpisodes("other", imprint.Scope{}, turns, "test")
	if other[0].ID == first[0].ID {
		t.Errorf("two sessions share an episode id")
	}
	for _, ep := range first {
		if !uuidForm.MatchString(ep.ID) {
			t.Errorf("id %q is not a version 8 UUID", ep.ID)
		}
	}
	if got, want := first[0].StartedAt, ts("2026-01-01T10:00:00Z"); got != want {
		t.Errorf("StartedAt = %v, want %v", got, want)
	}
	if got, want := first[0].EndedAt, ts("2026-01-01T10:00:05Z"); got != want {
		t.Errorf("EndedAt = %v, want %v", got, want)
	}
}

func TestMessagesFromTurns(t *testing.T) {
	t.Parallel()
	turns := []imprint.Turn{
		{ID: "u1", Role: imprint.RoleUser, Content: "book a flight"},
		{Role: imprint.RoleAssistant, Content: ""}, // only calls tools
		{Role: imprint.RoleTool, Content: "UA12", Meta: imprint.TurnMeta{Name: "search"}},
		{Role: imprint.RoleAssistant, Content: "UA12 it is", Meta: imprint.TurnMeta{Thinking: "cheapest"}},
		{Role: imprint.RoleSystem, Content: "policy"},
		{Role: imprint.RoleUser, Content: "   "},
		{Role: imprint.RoleUser, Content: "sub prompt", Meta: imprint.TurnMeta{IsSubagent: true, Depth: 1}},
	}
	msgs := MessagesFromTurns("s", imprint.DefaultScope(), turns, "test")
	if diff := cmp.Diff([]string{"user: book a flight", "assistant: UA12 it is"}, contents(msgs)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if msgs[0].ID != "u1" {
		t.Errorf("turn id not kept: %q", msgs[0].ID)
	}
	if msgs[1].ID == "" || msgs[1].Scope != imprint.DefaultScope() || msgs[1].SessionID != "s" {
		t.Errorf("message fields: %+v", msgs[1])
	}
	if again := MessagesFromTurns("s", imprint.DefaultScope(), turns, "test"); again[1].ID != msgs[1].ID {
		t.Errorf("derived id not deterministic")
	}
}

func TestEachLine(t *testing.T) {
	t.Parallel()
	var got []string
	err := eachLine(strings.NewReader("\xef\xbb\xbfa\r\n\nb\nc"), func(n int, line []byte, tooLong bool) {
		got = append(got, string(rune('0'+n))+":"+string(line))
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1:a", "2:", "3:b", "4:c"}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestToolInput(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"a": 1}`, `{"a":1}`},
		{`"{\"a\": 1}"`, `{"a":1}`},
		{`"ls -la"`, `"ls -la"`},
		{`null`, ``},
		{``, ``},
		{`[1,2]`, `[1,2]`},
	}
	for _, tt := range tests {
		if got := string(toolInput([]byte(tt.in))); got != tt.want {
			t.Errorf("toolInput(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
