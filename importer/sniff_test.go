package importer

import (
	"errors"
	"os"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

func TestSniffRealFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path, want string
	}{
		{sharedTestFile(t, "claude-code/session_b.jsonl"), FormatClaudeCode},
		{sharedTestFile(t, "claude-code/edge_cases.jsonl"), FormatClaudeCode},
		{sharedTestFile(t, "claude-code/representative_messages.jsonl"), FormatClaudeCode},
		{sharedTestFile(t, "claude-code/todowrite_examples.jsonl"), FormatClaudeCode},
		{sharedTestFile(t, "tau-bench/airline-40.json"), FormatTauBench},
		{sharedTestFile(t, "locomo/locomo-2conv.json"), FormatLoCoMo},
		{"testdata/claudecode/branch.jsonl", FormatClaudeCode},
		{"testdata/openclaw/session.jsonl", FormatOpenClaw},
		{"testdata/openai/chat.json", FormatOpenAI},
		{"testdata/chatgpt/conversations.json", FormatChatGPT},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1024, SniffBytes} {
			head := data[:min(n, len(data))]
			got, err := Sniff(tt.path, head)
			if err != nil || got != tt.want {
				t.Errorf("Sniff(%s, %d bytes) = %q, %v; want %q", tt.path, n, got, err, tt.want)
			}
		}
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, head, want string
	}{
		{"imprint episode", "e.json", `{"session_id":"s","turns":[{"role":"user","content":"hi"}]}`, FormatImprint},
		{"imprint episodes array", "e.json", `[{"session_id":"s","turns":[]}]`, FormatImprint},
		{"imprint episodes jsonl", "e.jsonl", "{\"session_id\":\"s\",\"turns\":[]}\n{\"session_id\":\"t\",\"turns\":[]}", FormatImprint},
		{"imprint messages", "m.json", `{"session_id":"s","messages":[{"role":"user","content":"x"}]}`, FormatImprint},
		{"imprint message stream", "m.jsonl", "{\"role\":\"user\",\"content\":\"x\"}\n{\"role\":\"assistant\",\"content\":\"y\"}", FormatImprint},
		{"openai list", "c.json", `[{"role":"system","content":"x"},{"role":"user","content":"y"}]`, FormatOpenAI},
		{"openai object", "c.json", `{"messages":[{"role":"user","content":"y"}]}`, FormatOpenAI},
		{"openai tool message line", "c.jsonl", `{"role":"assistant","tool_calls":[]}`, FormatOpenAI},
		{"chatgpt single conversation", "c.json", `{"title":"t","mapping":{}}`, FormatChatGPT},
		{"chatgpt by name", "conversations.json", `[{"title":"t","create_time":1.5,"update_time":2,"moderation_results":[],"x":"cut off her`, FormatChatGPT},
		{"claude code summary first", "s.jsonl", `{"type":"summary","summary":"x","leafUuid":"y"}`, FormatClaudeCode},
		{"claude code snapshot first", "s.jsonl", `{"type":"file-history-snapshot","messageId":"m","snapshot":{}}`, FormatClaudeCode},
		{"openclaw header", "s.jsonl", `{"type":"session","version":3,"id":"x"}`, FormatOpenClaw},
		{"cut-off head", "t.json", `[{"task_id": 3, "reward": 1.0, "info": {"task": {"instr`, FormatTauBench},
		{"byte order mark", "s.jsonl", "\xef\xbb\xbf" + `{"type":"session","id":"x"}`, FormatOpenClaw},
	}
	for _, tt := range tests {
		got, err := Sniff(tt.path, []byte(tt.head))
		if err != nil || got != tt.want {
			t.Errorf("%s: Sniff = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	for _, head := range []string{"", "hello", "[]", "[1,2]", `{"a":1}`, "42", `[{"x":1}]`} {
		if got, err := Sniff("x", []byte(head)); !errors.Is(err, imprint.ErrInvalid) {
			t.Errorf("Sniff(%q) = %q, %v; want ErrInvalid", head, got, err)
		}
	}
}

func FuzzSniff(f *testing.F) {
	f.Add("a.jsonl", []byte(`{"type":"session"}`))
	f.Add("b.json", []byte(`[{"qa":[{"question":"q"}],"conversation":{}}]`))
	f.Add("c.json", []byte(`[[{"role":"user"}]]`))
	f.Fuzz(func(t *testing.T, path string, head []byte) {
		got, err := Sniff(path, head)
		if err != nil {
			if !errors.Is(err, imprint.ErrInvalid) || got != "" {
				t.Fatalf("Sniff = %q, %v", got, err)
			}
			return
		}
		switch got {
		case FormatClaudeCode, FormatOpenClaw, FormatOpenAI, FormatTauBench, FormatChatGPT, FormatLoCoMo, FormatImprint:
		default:
			t.Fatalf("unknown format %q", got)
		}
	})
}
