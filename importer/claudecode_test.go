package importer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

func readClaudeCodeFile(t *testing.T, path string) Transcript {
	t.Helper()
	tr, err := ReadClaudeCode(openFile(t, path), path)
	if err != nil {
		t.Fatalf("ReadClaudeCode(%s): %v", path, err)
	}
	checkTranscript(t, tr)
	return tr
}

func TestReadClaudeCodeSessionB(t *testing.T) {
	t.Parallel()
	tr := readClaudeCodeFile(t, sharedTestFile(t, "claude-code/session_b.jsonl"))
	if tr.Source != SourceClaudeCode || tr.SessionID != "session_b" {
		t.Errorf("source %q session %q", tr.Source, tr.SessionID)
	}
	want := []string{
		"user: This is from a different session file to test multi-session handling.",
		"assistant: Indeed! This message is from a different JSONL file, which should help test the session divider logic. Only the first session should show a divider.",
		"user: Perfect! This should appear without any session divider above it.",
	}
	if diff := cmp.Diff(want, contents(tr.Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	var got []string
	for _, ep := range tr.Episodes {
		got = append(got, roles(ep))
	}
	if diff := cmp.Diff([]string{"user assistant", "user"}, got); diff != "" {
		t.Errorf("episodes (-want +got):\n%s", diff)
	}
	if got, want := tr.Messages[1].Timestamp, ts("2025-06-14T12:00:30Z"); got != want {
		t.Errorf("timestamp %v, want %v", got, want)
	}
	if len(tr.Warnings) != 0 {
		t.Errorf("warnings: %v", tr.Warnings)
	}
}

func TestReadClaudeCodeRepresentative(t *testing.T) {
	t.Parallel()
	tr := readClaudeCodeFile(t, sharedTestFile(t, "claude-code/representative_messages.jsonl"))
	if tr.SessionID != "test_session" {
		t.Errorf("session %q", tr.SessionID)
	}
	// 4 user requests and 3 assistant texts; the two assistant messages that
	// only call tools and the two tool-result lines are not L0 messages.
	if len(tr.Messages) != 7 {
		t.Errorf("%d messages, want 7:\n%s", len(tr.Messages), strings.Join(contents(tr.Messages), "\n"))
	}
	var shapes []string
	for _, ep := range tr.Episodes {
		shapes = append(shapes, roles(ep))
	}
	wantShapes := []string{"user assistant", "user assistant tool assistant", "user assistant tool assistant", "user"}
	if diff := cmp.Diff(wantShapes, shapes); diff != "" {
		t.Errorf("episodes (-want +got):\n%s", diff)
	}
	tools := toolTurns(tr.Episodes)
	if len(tools) != 2 {
		t.Fatalf("%d tool turns, want 2", len(tools))
	}
	if tools[0].Meta.Name != "Edit" || tools[0].Meta.ToolCallID != "tool_001" || tools[0].Content != "File created successfully at: /tmp/decorator_example.py" {
		t.Errorf("Edit call not paired with its result: %+v", tools[0])
	}
	if tools[1].Meta.Name != "Bash" || tools[1].Content != "Hello, Alice!\nHello, Alice!\nHello, Alice!" || tools[1].Meta.Error != "" {
		t.Errorf("Bash call not paired with its result: %+v", tools[1])
	}
	if !bytes.Contains(tools[1].Meta.Input, []byte(`"command":"python /tmp/decorator_example.py"`)) {
		t.Errorf("Bash input %s", tools[1].Meta.Input)
	}
	if got := tools[1].Meta.EndedAt.Sub(tools[1].Meta.StartedAt.Time).Seconds(); got != 1 {
		t.Errorf("Bash call took %vs, want 1s", got)
	}
	// The assistant turn before a tool turn keeps the call in the step: it is
	// a turn with empty content.
	if a := tr.Episodes[1].Turns[1]; a.Role != imprint.RoleAssistant || a.Content != "" {
		t.Errorf("tool-calling assistant turn: %+v", a)
	}
	for _, m := range tr.Messages {
		if strings.Contains(m.Content, "User learned about Python decorators") {
			t.Errorf("summary line became a message")
		}
	}
}

func TestReadClaudeCodeEdgeCases(t *testing.T) {
	t.Parallel()
	tr := readClaudeCodeFile(t, sharedTestFile(t, "claude-code/edge_cases.jsonl"))
	if tr.SessionID != "edge_cases" {
		t.Errorf("session %q", tr.SessionID)
	}
	// 10: content key misspelled; 11: message is a string; 13-16: not Claude
	// Code lines; 17: a line of another session; 18: content holds no block.
	if diff := cmp.Diff([]int{10, 11, 13, 14, 15, 16, 17, 18}, warningLines(tr.Warnings)); diff != "" {
		t.Errorf("warning lines (-want +got):\n%s\n%v", diff, tr.Warnings)
	}
	for _, w := range tr.Warnings {
		if w.File == "" || w.Message == "" {
			t.Errorf("warning without file or message: %+v", w)
		}
	}
	want := []string{
		"user: Here's a message with some **markdown** formatting, `inline code`, and even a [link](https://example.com). Let's see how it renders!",
		"assistant: Great example!",
		"user: Let's test a very long message",
		"user: /test-command --verbose --output /tmp/test.log",
		"assistant: I see the long Lorem ipsum text wraps nicely!",
		"user: Testing special characters: café, naïve, résumé, 中文, العربية, русский, 🎉 emojis 🚀 and symbols ∑∆√π∞",
	}
	got := contents(tr.Messages)
	if len(got) != len(want) {
		t.Fatalf("messages:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("message %d = %.80q, want prefix %q", i, got[i], want[i])
		}
	}
	for _, m := range tr.Messages {
		if strings.Contains(m.Content, "Caveat:") || strings.Contains(m.Content, "local-command-stdout") {
			t.Errorf("local command noise became a message: %.60q", m.Content)
		}
	}
	tools := toolTurns(tr.Episodes)
	if len(tools) != 2 {
		t.Fatalf("%d tool turns, want 2", len(tools))
	}
	if tools[0].Meta.Name != "FailingTool" || tools[0].Meta.Error != "Error: Tool execution failed with error: Command not found" {
		t.Errorf("failed tool: %+v", tools[0])
	}
	// MultiEdit's result sat on the malformed line 10: the call stays,
	// without output.
	if tools[1].Meta.Name != "MultiEdit" || tools[1].Content != "" {
		t.Errorf("MultiEdit: %+v", tools[1])
	}
	if len(tr.Episodes) != 4 {
		t.Errorf("%d episodes, want 4", len(tr.Episodes))
	}
}

func TestReadClaudeCodeTodoWrite(t *testing.T) {
	t.Parallel()
	tr := readClaudeCodeFile(t, sharedTestFile(t, "claude-code/todowrite_examples.jsonl"))
	if len(tr.Messages) != 5 || len(tr.Episodes) != 2 {
		t.Errorf("%d messages, %d episodes; want 5, 2", len(tr.Messages), len(tr.Episodes))
	}
	tools := toolTurns(tr.Episodes)
	if len(tools) != 3 {
		t.Fatalf("%d tool turns, want 3", len(tools))
	}
	for _, tool := range tools {
		if tool.Meta.Name != "TodoWrite" || !strings.HasPrefix(tool.Content, "Todos have been modified successfully") {
			t.Errorf("TodoWrite call not paired: %+v", tool)
		}
		if !bytes.Contains(tool.Meta.Input, []byte(`"todos":[`)) {
			t.Errorf("input %s", tool.Meta.Input)
		}
	}
}

func TestReadClaudeCodeBranchesAndSubagents(t *testing.T) {
	t.Parallel()
	tr := readClaudeCodeFile(t, "testdata/claudecode/branch.jsonl")
	if tr.SessionID != "branch-session" {
		t.Errorf("session %q", tr.SessionID)
	}
	want := []string{
		"user: Fix the failing test in parser_test.go",
		"assistant: Let me run the tests first.",
		"assistant: Fixed: the loop bound skipped the last token.",
		"user: Thanks! Now add a regression test.",
		"assistant: Done: the regression test is in parser_last_test.go.",
	}
	if diff := cmp.Diff(want, contents(tr.Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{15}, warningLines(tr.Warnings)); diff != "" {
		t.Errorf("warning lines (-want +got):\n%s\n%v", diff, tr.Warnings)
	}
	if len(tr.Episodes) != 2 {
		t.Fatalf("%d episodes, want 2", len(tr.Episodes))
	}
	if got, want := roles(tr.Episodes[0]), "user assistant tool assistant tool assistant"; got != want {
		t.Errorf("episode 1: %s, want %s", got, want)
	}
	if got, want := roles(tr.Episodes[1]), "user assistant tool assistant *user *assistant *tool *assistant"; got != want {
		t.Errorf("episode 2: %s, want %s", got, want)
	}
	// The three lines of msg_A are one turn; its thinking is meta only.
	first := tr.Episodes[0].Turns[1]
	if first.Content != "Let me run the tests first." || !strings.Contains(first.Meta.Thinking, "tokenizer drops the last token") {
		t.Errorf("merged assistant turn: %+v", first)
	}
	for _, m := range tr.Messages {
		if strings.Contains(m.Content, "tokenizer drops") {
			t.Errorf("thinking leaked into L0: %q", m.Content)
		}
	}
	// The abandoned branch (u2, a6) is gone.
	for _, ep := range tr.Episodes {
		for _, turn := range ep.Turns {
			if strings.Contains(turn.Content, "table-driven") {
				t.Errorf("abandoned branch imported: %q", turn.Content)
			}
		}
	}
	bash := tr.Episodes[0].Turns[2]
	if bash.Meta.Name != "Bash" || bash.Meta.Error != "--- FAIL: TestParse (0.00s)" {
		t.Errorf("Bash error: %+v", bash)
	}
	if edit := tr.Episodes[0].Turns[4]; edit.Content != "The file /src/p/parser.go has been updated." {
		t.Errorf("Edit output from blocks: %q", edit.Content)
	}
	for _, turn := range tr.Episodes[1].Turns[4:] {
		if turn.Meta.Depth != 1 || !turn.Meta.IsSubagent {
			t.Errorf("sub-agent turn without depth: %+v", turn)
		}
	}
	if task := tr.Episodes[1].Turns[2]; task.Meta.Name != "Task" || task.Content != "Added TestParseLastToken." {
		t.Errorf("Task call: %+v", task)
	}
}

func TestReadClaudeCodeIdempotent(t *testing.T) {
	t.Parallel()
	path := "testdata/claudecode/branch.jsonl"
	a := readClaudeCodeFile(t, path)
	b := readClaudeCodeFile(t, path)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two reads differ:\n%s", diff)
	}
	// The same session read through a different path keeps its ids.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadClaudeCode(bytes.NewReader(data), "/elsewhere/copy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if c.Messages[0].ID != a.Messages[0].ID || c.Episodes[0].ID != a.Episodes[0].ID {
		t.Errorf("ids depend on the file path")
	}
}

func TestReadClaudeCodeDir(t *testing.T) {
	t.Parallel()
	trs, warns, err := ReadClaudeCodeDir("testdata/claudecode/project")
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	if len(trs) != 1 {
		t.Fatalf("%d transcripts, want 1", len(trs))
	}
	tr := trs[0]
	checkTranscript(t, tr)
	if tr.SessionID != "s1" || len(tr.Episodes) != 2 || len(tr.Messages) != 5 {
		t.Fatalf("session %q, %d episodes, %d messages", tr.SessionID, len(tr.Episodes), len(tr.Messages))
	}
	// agent-ab12 was spawned by toolu_t in episode 1 (meta.json); agent-zz99
	// has no link and goes to the last episode.
	if got, want := roles(tr.Episodes[0]), "user assistant tool assistant *user *assistant *tool *assistant"; got != want {
		t.Errorf("episode 1: %s, want %s", got, want)
	}
	if got, want := roles(tr.Episodes[1]), "user assistant *user *assistant"; got != want {
		t.Errorf("episode 2: %s, want %s", got, want)
	}
	for _, m := range tr.Messages {
		if strings.Contains(m.Content, "usages: main.go") || strings.Contains(m.Content, "docs build") {
			t.Errorf("sub-agent text became an L0 message: %q", m.Content)
		}
	}

	// The parent folder of projects is read one level down.
	parent := t.TempDir()
	if err := os.CopyFS(filepath.Join(parent, "proj"), os.DirFS("testdata/claudecode/project")); err != nil {
		t.Fatal(err)
	}
	all, _, err := ReadClaudeCodeDir(parent)
	if err != nil || len(all) != 1 || all[0].SessionID != "s1" {
		t.Errorf("projects folder: %d transcripts, err %v", len(all), err)
	}
	if _, _, err := ReadClaudeCodeDir(filepath.Join(parent, "missing")); err == nil {
		t.Errorf("missing folder: no error")
	}
}

func TestReadClaudeCodeAgentLinkedByResult(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/claudecode/project")); err != nil {
		t.Fatal(err)
	}
	// Without meta.json the Task result's agentId links the sub-agent.
	if err := os.Remove(filepath.Join(dir, "s1/subagents/agent-ab12.meta.json")); err != nil {
		t.Fatal(err)
	}
	trs, _, err := ReadClaudeCodeDir(dir)
	if err != nil || len(trs) != 1 {
		t.Fatalf("%d transcripts, err %v", len(trs), err)
	}
	if got, want := roles(trs[0].Episodes[0]), "user assistant tool assistant *user *assistant *tool *assistant"; got != want {
		t.Errorf("episode 1: %s, want %s", got, want)
	}
}

func TestReadClaudeCodeMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		invalid bool
		msgs    int
	}{
		{"empty file", "", false, 0},
		{"only a summary", `{"type":"summary","summary":"x","leafUuid":"y"}`, false, 0},
		{"not json at all", "hello\nworld\n", true, 0},
		{"one good line among bad", "garbage\n" + `{"type":"user","sessionId":"s","uuid":"1","message":{"role":"user","content":"hi"}}` + "\n{", false, 1},
		{"parent cycle", `{"type":"user","sessionId":"s","uuid":"1","parentUuid":"2","message":{"role":"user","content":"a"}}` + "\n" +
			`{"type":"assistant","sessionId":"s","uuid":"2","parentUuid":"1","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"b"}]}}`, false, 2},
		{"api error reply skipped", `{"type":"user","sessionId":"s","uuid":"1","message":{"role":"user","content":"a"}}` + "\n" +
			`{"type":"assistant","sessionId":"s","uuid":"2","parentUuid":"1","isApiErrorMessage":true,"message":{"id":"m","role":"assistant","content":[{"type":"text","text":"API Error: 500"}]}}`, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, err := ReadClaudeCode(strings.NewReader(tt.in), "x.jsonl")
			if tt.invalid {
				if !errors.Is(err, imprint.ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkTranscript(t, tr)
			if len(tr.Messages) != tt.msgs {
				t.Errorf("%d messages, want %d", len(tr.Messages), tt.msgs)
			}
		})
	}
}

func FuzzReadClaudeCode(f *testing.F) {
	for _, p := range []string{"representative_messages.jsonl", "edge_cases.jsonl", "session_b.jsonl", "todowrite_examples.jsonl"} {
		if b, err := os.ReadFile(sharedTestFile(f, "claude-code/"+p)); err == nil {
			f.Add(b)
		}
	}
	if b, err := os.ReadFile("testdata/claudecode/branch.jsonl"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"type":"user","uuid":"a","parentUuid":"a","message":{"content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"text"}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadClaudeCode(bytes.NewReader(data), "f.jsonl")
		if err != nil {
			if !errors.Is(err, imprint.ErrInvalid) {
				t.Fatalf("error of unexpected kind: %v", err)
			}
			return
		}
		for _, m := range tr.Messages {
			if strings.TrimSpace(m.Content) == "" || (m.Role != imprint.RoleUser && m.Role != imprint.RoleAssistant) {
				t.Fatalf("bad message %+v", m)
			}
		}
		for _, ep := range tr.Episodes {
			if ep.ID == "" || len(ep.Turns) == 0 {
				t.Fatalf("bad episode %+v", ep)
			}
		}
	})
}

func BenchmarkReadClaudeCode(b *testing.B) {
	data, err := os.ReadFile(sharedTestFile(b, "claude-code/edge_cases.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadClaudeCode(bytes.NewReader(data), "edge_cases.jsonl"); err != nil {
			b.Fatal(err)
		}
	}
}
