package extract

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func msg(id string, role imprint.Role, at string, content string) imprint.Message {
	ts, err := imprint.ParseTime(at)
	if err != nil {
		panic(err)
	}
	return imprint.Message{ID: id, Role: role, Content: content, Timestamp: ts}
}

func TestExtractionUserMessageGolden(t *testing.T) {
	t.Parallel()
	bg := []imprint.Message{
		msg("m1", imprint.RoleUser, "2026-03-02T08:59:00+01:00", "We are going to Kyoto in April."),
		msg("m2", imprint.RoleAssistant, "2026-03-02T08:00:05Z", "Nice! Do you need hotel ideas?"),
	}
	newMsgs := []imprint.Message{
		msg("m3", imprint.RoleUser, "2026-03-02T08:01:00.250Z", "Yes, near Gion.\nMy wife Aiko is vegetarian."),
		msg("m4", imprint.RoleUser, "2026-03-02T08:02:00Z", "从现在起请用中文回答。"),
	}
	tests := []struct {
		name, scene string
		bg          []imprint.Message
	}{
		{"extract_user_with_background.golden", "Planning a trip to Kyoto", bg},
		{"extract_user_first_window.golden", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			golden(t, tt.name, ExtractionUserMessage(tt.scene, tt.bg, newMsgs))
		})
	}
}

func TestExtractionUserMessageSections(t *testing.T) {
	t.Parallel()
	at := imprint.At(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	got := ExtractionUserMessage("  Old\nscene ", nil, []imprint.Message{{ID: "x", Role: imprint.RoleUser, Content: "hi there", RecordedAt: at}})
	want := "PREVIOUS SCENE: Old scene\nBACKGROUND MESSAGES:\n(none)\nNEW MESSAGES:\n[x] [user] [2026-01-02T03:04:05.000Z]: hi there\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestSystemPromptsStateTheRules(t *testing.T) {
	t.Parallel()
	sys := ExtractionSystemPrompt()
	for _, want := range []string{
		"persona", "episodic", "instruction", "priority -1", "80-100", "50-70", "60-70", "90-100", "70-80",
		"activity_start_time", "activity_end_time", "PREVIOUS SCENE", "BACKGROUND MESSAGES", "NEW MESSAGES",
		`"scenes"`, `"scene_name"`, `"source_message_ids"`, "language",
	} {
		if !strings.Contains(sys, want) {
			t.Errorf("extraction system prompt lacks %q", want)
		}
	}
	for _, want := range []string{`"decisions"`, `"record_id"`, `"target_ids"`, "merged_content", "candidate_ids"} {
		if !strings.Contains(DedupSystemPrompt(), want) {
			t.Errorf("dedup system prompt lacks %q", want)
		}
	}
}

func BenchmarkExtractionUserMessage(b *testing.B) {
	var msgs []imprint.Message
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for i := range 15 {
		msgs = append(msgs, imprint.Message{ID: imprint.NewID(), Role: imprint.RoleUser,
			Content: strings.Repeat("I moved to Berlin last spring and work at a bakery. ", 8), Timestamp: imprint.At(at.Add(time.Duration(i) * time.Minute))})
	}
	for b.Loop() {
		ExtractionUserMessage("Planning a trip", msgs[:5], msgs[5:])
	}
}
