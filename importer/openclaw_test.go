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

func TestReadOpenClaw(t *testing.T) {
	t.Parallel()
	path := "testdata/openclaw/session.jsonl"
	tr, err := ReadOpenClaw(openFile(t, path), path)
	if err != nil {
		t.Fatal(err)
	}
	checkTranscript(t, tr)
	if tr.Source != SourceOpenClaw || tr.SessionID != "oc-sess-1" {
		t.Errorf("source %q session %q", tr.Source, tr.SessionID)
	}
	want := []string{
		"user: What's the weather in Lisbon tomorrow? I prefer Celsius.",
		"assistant: Tomorrow in Lisbon: 18°C with light rain.",
		"user: Then remind me to take an umbrella.",
		"assistant: I could not set the reminder: the scheduler refused.",
	}
	if diff := cmp.Diff(want, contents(tr.Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{9}, warningLines(tr.Warnings)); diff != "" {
		t.Errorf("warning lines (-want +got):\n%s", diff)
	}
	var shapes []string
	for _, ep := range tr.Episodes {
		shapes = append(shapes, roles(ep))
	}
	if diff := cmp.Diff([]string{"user assistant tool assistant", "user assistant tool assistant"}, shapes); diff != "" {
		t.Errorf("episodes (-want +got):\n%s", diff)
	}
	call := tr.Episodes[0].Turns[1]
	if call.Content != "" || call.Meta.Thinking != "I should call the weather tool." {
		t.Errorf("tool-calling assistant turn: %+v", call)
	}
	tools := toolTurns(tr.Episodes)
	if tools[0].Meta.Name != "weather" || tools[0].Meta.ToolCallID != "call_1" || tools[0].Content != "Lisbon tomorrow: 18°C, light rain" ||
		string(tools[0].Meta.Input) != `{"city":"Lisbon","day":"tomorrow"}` {
		t.Errorf("weather call: %+v (input %s)", tools[0], tools[0].Meta.Input)
	}
	if tools[1].Meta.Name != "cron" || tools[1].Meta.Error != "cron: permission denied" {
		t.Errorf("failed cron call: %+v", tools[1])
	}
	if got, want := tr.Messages[0].Timestamp, ts("2026-02-06T07:41:00Z"); got != want {
		t.Errorf("timestamp %v, want %v", got, want)
	}
	for _, m := range tr.Messages {
		if strings.Contains(m.Content, "64°F") {
			t.Errorf("abandoned branch imported")
		}
	}
}

func TestReadOpenClawLinear(t *testing.T) {
	t.Parallel()
	// Entries without ids (older files) are read in order; the message
	// timestamp (epoch ms) is used when the entry has none.
	in := `{"type":"session","id":"lin"}
{"type":"message","message":{"role":"user","content":"hello","timestamp":1770363660000}}
{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hi there"}]}}
{"type":"message","message":{"role":"bashExecution","command":"ls"}}
{"type":"message","message":{"role":"toolResult","toolCallId":"nope","toolName":"read","content":[{"type":"text","text":"orphan output"}]}}
`
	tr, err := ReadOpenClaw(strings.NewReader(in), "")
	if err != nil {
		t.Fatal(err)
	}
	checkTranscript(t, tr)
	if diff := cmp.Diff([]string{"user: hello", "assistant: hi there"}, contents(tr.Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if got := tr.Messages[1].Timestamp; got != ts("2026-02-06T07:41:00Z") {
		t.Errorf("assistant time %v not carried over", got)
	}
	if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0].Message, "bashExecution") {
		t.Errorf("warnings: %v", tr.Warnings)
	}
	if got := roles(tr.Episodes[0]); got != "user assistant tool" {
		t.Errorf("episode: %s", got)
	}
}

func TestReadOpenClawNotJSON(t *testing.T) {
	t.Parallel()
	if _, err := ReadOpenClaw(strings.NewReader("nope\n"), "x.jsonl"); !errors.Is(err, imprint.ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
}

func FuzzReadOpenClaw(f *testing.F) {
	if b, err := os.ReadFile("testdata/openclaw/session.jsonl"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"type":"message","id":"a","parentId":"a","message":{"role":"toolResult","content":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadOpenClaw(bytes.NewReader(data), "f.jsonl")
		if err != nil {
			if !errors.Is(err, imprint.ErrInvalid) {
				t.Fatalf("error of unexpected kind: %v", err)
			}
			return
		}
		for _, m := range tr.Messages {
			if strings.TrimSpace(m.Content) == "" {
				t.Fatalf("blank message %+v", m)
			}
		}
	})
}
