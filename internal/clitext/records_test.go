package clitext

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	imprint "github.com/imprint-dev/imprint"
)

func mustTime(t *testing.T, s string) imprint.Time {
	t.Helper()
	tm, err := imprint.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestTracesAlignedColumns checks the traces listing a user drills in
// from: a header, then per trace its id, time, session, episode, step, α
// and request in columns that line up; a step without a reflection says
// so instead of showing α 0.00.
func TestTracesAlignedColumns(t *testing.T) {
	t.Parallel()
	refl := "Checked the seat map first."
	trs := []imprint.Trace{
		{ID: "trace-aaaa", TS: mustTime(t, "2026-05-01T10:00:00Z"), SessionID: "s1", EpisodeID: "ep-1", StepIndex: 0,
			UserText: "Find me a flight\nSFO to JFK", Reflection: &refl, ReflectionSource: imprint.ReflectionExtracted, Alpha: 0.85, Usable: true,
			ToolCalls: []imprint.ToolCall{{Name: "search_flights"}}},
		{ID: "trace-b", TS: mustTime(t, "2026-05-01T10:01:00Z"), SessionID: "session-two", EpisodeID: "ep-1", StepIndex: 1,
			UserText: "Book it", ReflectionSource: imprint.ReflectionNone},
		{ID: "trace-c", SessionID: "s1", EpisodeID: "ep-2", StepIndex: 0, UserText: "Cancel",
			Reflection: &refl, ReflectionSource: imprint.ReflectionSynth, Alpha: 0.3},
	}
	var b bytes.Buffer
	if err := Traces(&b, trs); err != nil {
		t.Fatal(err)
	}
	want := `ID          TIME              SESSION      EPISODE  STEP  α              TOOLS  TASK
trace-aaaa  2026-05-01 10:00  s1           ep-1     0     0.85           1      Find me a flight SFO to JFK
trace-b     2026-05-01 10:01  session-two  ep-1     1     no reflection  0      Book it
trace-c     -                 s1           ep-2     0     0.30 unusable  0      Cancel
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("traces listing (-want +got):\n%s", d)
	}
	b.Reset()
	if err := Traces(&b, nil); err != nil || b.String() != "no traces\n" {
		t.Errorf("empty listing %q, %v", b.String(), err)
	}
}

// TestMemoriesAlignedColumns checks the memories listing: id, update time,
// session, type, priority, version and content, a superseded or forgotten
// version marked.
func TestMemoriesAlignedColumns(t *testing.T) {
	t.Parallel()
	next := "m2"
	gone := mustTime(t, "2026-05-03T00:00:00Z")
	ms := []imprint.Memory{
		{ID: "m2", UpdatedAt: mustTime(t, "2026-05-02T08:30:00Z"), SessionID: "move", Type: imprint.MemoryPersona, Priority: 80, Version: 2, Content: "The user lives in Munich."},
		{ID: "m1", UpdatedAt: mustTime(t, "2026-05-01T08:30:00Z"), SessionID: "home", Type: imprint.MemoryPersona, Priority: 80, Version: 1, Content: "The user lives in Berlin.", SupersededBy: &next},
		{ID: "i1", UpdatedAt: mustTime(t, "2026-05-01T09:00:00Z"), Type: imprint.MemoryInstruction, Priority: -1, Version: 1, Content: "Never deploy on a Friday.", ForgottenAt: &gone},
	}
	var b bytes.Buffer
	if err := Memories(&b, ms); err != nil {
		t.Fatal(err)
	}
	want := `ID  UPDATED           SESSION  TYPE         P   V   CONTENT
m2  2026-05-02 08:30  move     persona      80  v2  The user lives in Munich.
m1  2026-05-01 08:30  home     persona      80  v1  The user lives in Berlin. (superseded)
i1  2026-05-01 09:00  -        instruction  -1  v1  Never deploy on a Friday. (forgotten)
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("memories listing (-want +got):\n%s", d)
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a  b\n\tc", 10, "a b c"},
		{"  lead", 10, "lead"},
		{"abcdef", 3, "abc…"},
		{"日本語のテキスト", 3, "日本語…"},
	} {
		if got := OneLine(tc.in, tc.n); got != tc.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestVersion checks the version line from the build information the Go
// toolchain records: module version, short commit, dirty mark and time.
func TestVersion(t *testing.T) {
	t.Parallel()
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b9c0d"}, {Key: "vcs.time", Value: "2026-05-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionOf(bi), "v0.3.0 (commit 1a2b3c4d5e6f+dirty, 2026-05-01T10:00:00Z)"; got != want {
		t.Errorf("versionOf = %q, want %q", got, want)
	}
	if got := versionOf(&debug.BuildInfo{}); !strings.HasPrefix(got, "(devel) (no vcs commit") {
		t.Errorf("without module version or vcs: %q", got)
	}
}

// TestRecall: the block is printed once with one newline at its end; an
// empty block prints nothing on stdout and says so on stderr.
func TestRecall(t *testing.T) {
	t.Parallel()
	var out, errw strings.Builder
	if err := Recall(&out, &errw, imprint.RecallResult{Context: "<memory>\nAda keeps bees\n</memory>\n\n"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "<memory>\nAda keeps bees\n</memory>\n" || errw.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", out.String(), errw.String())
	}
	out.Reset()
	if err := Recall(&out, &errw, imprint.RecallResult{Context: " \n"}); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 || errw.String() != "imprint: nothing to recall\n" {
		t.Errorf("empty recall: stdout %q, stderr %q", out.String(), errw.String())
	}
}
