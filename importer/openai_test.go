package importer

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

func TestReadOpenAIChat(t *testing.T) {
	t.Parallel()
	path := "testdata/openai/chat.json"
	trs, err := ReadOpenAIChat(openFile(t, path), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 1 {
		t.Fatalf("%d transcripts, want 1", len(trs))
	}
	tr := trs[0]
	checkTranscript(t, tr)
	if tr.Source != SourceOpenAI || tr.SessionID != "chat" {
		t.Errorf("source %q session %q", tr.Source, tr.SessionID)
	}
	want := []string{
		"user: Book me the cheapest flight from SFO to JFK on May 3.",
		"assistant: UA12 at $189 is the cheapest.\n\nShall I book it?",
		"user: Yes, book it.",
		"assistant: Booking now.",
		"assistant: Booked: confirmation ABC123.",
	}
	if diff := cmp.Diff(want, contents(tr.Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	var shapes []string
	for _, ep := range tr.Episodes {
		shapes = append(shapes, roles(ep))
	}
	// The system prompt is not part of any episode.
	if diff := cmp.Diff([]string{"user assistant tool assistant", "user assistant tool assistant"}, shapes); diff != "" {
		t.Errorf("episodes (-want +got):\n%s", diff)
	}
	tools := toolTurns(tr.Episodes)
	if string(tools[0].Meta.Input) != `{"from":"SFO","to":"JFK","date":"2026-05-03"}` || tools[0].Content != `[{"flight": "UA12", "price": 189}]` {
		t.Errorf("search call: %+v (input %s)", tools[0], tools[0].Meta.Input)
	}
	if tools[1].Meta.Name != "book_flight" || tools[1].Meta.ToolCallID != "call_b" || tools[1].Content != "confirmed: ABC123" {
		t.Errorf("book call: %+v", tools[1])
	}
	if len(tr.Warnings) != 2 || !strings.Contains(tr.Warnings[0].Message, "messages[8]") || !strings.Contains(tr.Warnings[1].Message, `"narrator"`) {
		t.Errorf("warnings: %v", tr.Warnings)
	}
}

func TestReadOpenAIChatShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		file, in string
		sessions []string
		msgs     []int
	}{
		{"object with session_id", "x.json", `{"session_id":"abc","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`, []string{"abc"}, []int{2}},
		{"array of conversations", "convs.json", `[{"id":"c1","messages":[{"role":"user","content":"a"}]},{"messages":[{"role":"user","content":"b"}]}]`, []string{"c1", "convs-2"}, []int{1, 1}},
		{"jsonl of conversations", "ft.jsonl", `{"messages":[{"role":"user","content":"a"}]}` + "\n" + `{"messages":[{"role":"user","content":"b"},{"role":"assistant","content":"c"}]}`, []string{"ft-1", "ft-2"}, []int{1, 2}},
		{"jsonl of messages", "m.jsonl", `{"role":"user","content":"a"}` + "\n" + `{"role":"assistant","content":"b"}`, []string{"m"}, []int{2}},
		{"legacy function call", "f.json", `[{"role":"user","content":"time?"},{"role":"assistant","content":null,"function_call":{"name":"now","arguments":"{}"}},{"role":"function","name":"now","content":"12:00"},{"role":"assistant","content":"noon"}]`, []string{"f"}, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			trs, err := ReadOpenAIChat(strings.NewReader(tt.in), tt.file)
			if err != nil {
				t.Fatal(err)
			}
			var sessions []string
			var msgs []int
			for _, tr := range trs {
				checkTranscript(t, tr)
				sessions = append(sessions, tr.SessionID)
				msgs = append(msgs, len(tr.Messages))
			}
			if diff := cmp.Diff(tt.sessions, sessions); diff != "" {
				t.Errorf("sessions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.msgs, msgs); diff != "" {
				t.Errorf("message counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadOpenAIChatFunctionResultPaired(t *testing.T) {
	t.Parallel()
	in := `[{"role":"user","content":"time?"},{"role":"assistant","content":null,"function_call":{"name":"now","arguments":"{}"}},{"role":"function","name":"now","content":"12:00"}]`
	trs, err := ReadOpenAIChat(strings.NewReader(in), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	tools := toolTurns(trs[0].Episodes)
	if len(tools) != 1 || tools[0].Meta.Name != "now" || tools[0].Content != "12:00" {
		t.Errorf("function call not paired: %+v", tools)
	}
}

func TestReadOpenAIChatInvalid(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"plain text", `{"no":"messages"}`, `42`} {
		if _, err := ReadOpenAIChat(strings.NewReader(in), "x.json"); !errors.Is(err, imprint.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", in, err)
		}
	}
	// τ-bench trajectories are another reader's.
	if _, err := ReadOpenAIChat(openFile(t, sharedTestFile(t, "tau-bench/airline-40.json")), "airline-40.json"); !errors.Is(err, imprint.ErrInvalid) {
		t.Errorf("τ-bench file: err = %v, want ErrInvalid", err)
	}
	// Without a name the session is named after the content, stably.
	a, _ := ReadOpenAIChat(strings.NewReader(`[{"role":"user","content":"x"}]`), "-")
	b, _ := ReadOpenAIChat(strings.NewReader(`[{"role":"user","content":"x"}]`), "")
	if a[0].SessionID == "" || a[0].SessionID != b[0].SessionID {
		t.Errorf("stdin sessions %q, %q", a[0].SessionID, b[0].SessionID)
	}
}

func FuzzReadOpenAIChat(f *testing.F) {
	if b, err := os.ReadFile("testdata/openai/chat.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"messages":[{"role":"tool","name":"x"}]}` + "\n" + `{"role":"user","content":[1,{"type":"image_url"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		trs, err := ReadOpenAIChat(bytes.NewReader(data), "f.json")
		if err != nil {
			if !errors.Is(err, imprint.ErrInvalid) {
				t.Fatalf("error of unexpected kind: %v", err)
			}
			return
		}
		for _, tr := range trs {
			for _, m := range tr.Messages {
				if strings.TrimSpace(m.Content) == "" {
					t.Fatalf("blank message %+v", m)
				}
			}
		}
	})
}
