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

func TestReadChatGPT(t *testing.T) {
	t.Parallel()
	path := "testdata/chatgpt/conversations.json"
	trs, err := ReadChatGPT(openFile(t, path), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 2 {
		t.Fatalf("%d transcripts, want 2", len(trs))
	}
	for _, tr := range trs {
		checkTranscript(t, tr)
	}
	bread := trs[0]
	if bread.Source != SourceChatGPT || bread.SessionID != "conv-bread" {
		t.Errorf("source %q session %q", bread.Source, bread.SessionID)
	}
	want := []string{
		"user: My sourdough is always dense. I bake at 230C.",
		"assistant: Use 375 g of water for 500 g flour and proof longer.",
		"user: [image]\n\nHere is my crumb.",
	}
	if diff := cmp.Diff(want, contents(bread.Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	var shapes []string
	for _, ep := range bread.Episodes {
		shapes = append(shapes, roles(ep))
	}
	if diff := cmp.Diff([]string{"user assistant tool assistant", "user"}, shapes); diff != "" {
		t.Errorf("episodes (-want +got):\n%s", diff)
	}
	call := bread.Episodes[0].Turns[1]
	if call.Content != "" || !strings.Contains(call.Meta.Thinking, "underproofing") {
		t.Errorf("thoughts not on the tool-calling turn: %+v", call)
	}
	tool := bread.Episodes[0].Turns[2]
	if tool.Meta.Name != "python" || tool.Content != "375.0" || string(tool.Meta.Input) != `"print(75 * 500 / 100)"` {
		t.Errorf("python call: %+v (input %s)", tool, tool.Meta.Input)
	}
	if got, want := bread.Messages[0].Timestamp, ts("2024-05-01T08:00:00.5Z"); got != want {
		t.Errorf("timestamp %v, want %v", got, want)
	}
	for _, ep := range bread.Episodes {
		for _, turn := range ep.Turns {
			if strings.Contains(turn.Content, "abandoned") {
				t.Errorf("edited-away branch imported")
			}
		}
	}
	// Without current_node the thread follows the latest children.
	if diff := cmp.Diff([]string{"user: I live in Porto.", "assistant: Noted, Porto."}, contents(trs[1].Messages)); diff != "" {
		t.Errorf("conv-two (-want +got):\n%s", diff)
	}
	if len(bread.Warnings) != 1 || !strings.Contains(bread.Warnings[0].Message, "conversations[1]") {
		t.Errorf("warnings: %v", bread.Warnings)
	}
}

func TestReadChatGPTInvalid(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"text", "[1,", `"s"`} {
		if _, err := ReadChatGPT(strings.NewReader(in), "c.json"); !errors.Is(err, imprint.ErrInvalid) {
			t.Errorf("%q: err = %v, want ErrInvalid", in, err)
		}
	}
}

func FuzzReadChatGPT(f *testing.F) {
	if b, err := os.ReadFile("testdata/chatgpt/conversations.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"current_node":"a","mapping":{"a":{"parent":"a","message":{"author":{"role":"tool"},"content":{"parts":[{}]}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		trs, err := ReadChatGPT(bytes.NewReader(data), "c.json")
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
