package importer

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/wire"
)

// TestReadImprintSkipsBadItems imports imprint JSON with one bad line or
// item among good ones: the bad one is reported with file and line and
// skipped, the good ones are read.
func TestReadImprintSkipsBadItems(t *testing.T) {
	t.Parallel()
	ep := func(sid, text string) string {
		return `{"session_id":"` + sid + `","turns":[{"role":"user","content":"` + text + `","ts":"2026-05-01T10:00:00Z"},{"role":"assistant","content":"ok ` + text + `"}]}`
	}
	msg := func(role, text string) string { return `{"role":"` + role + `","content":"` + text + `"}` }
	tests := []struct {
		name     string
		in       string
		messages []string
		episodes int
		// warnLines are the lines of the warnings; warnText is in each.
		warnLines []int
		warnText  string
	}{
		{
			name:      "malformed episode line",
			in:        ep("s", "one") + "\n{this is not json\n" + ep("s", "three") + "\n",
			messages:  []string{"user: one", "assistant: ok one", "user: three", "assistant: ok three"},
			episodes:  2,
			warnLines: []int{2}, warnText: "malformed JSON",
		},
		{
			name:      "invalid episode line",
			in:        ep("s", "one") + "\n" + `{"session_id":"s","turns":[{"role":"robot","content":"x"}]}` + "\n" + ep("s", "three"),
			messages:  []string{"user: one", "assistant: ok one", "user: three", "assistant: ok three"},
			episodes:  2,
			warnLines: []int{2}, warnText: `unknown role "robot"`,
		},
		{
			name:      "first line broken, blank lines before",
			in:        "\n\n{\"session_id\":\n" + ep("s", "two") + "\n" + ep("s", "three"),
			messages:  []string{"user: two", "assistant: ok two", "user: three", "assistant: ok three"},
			episodes:  2,
			warnLines: []int{3}, warnText: "malformed JSON",
		},
		{
			name:      "invalid episode in an array",
			in:        "[\n" + ep("s", "one") + ",\n" + `{"turns":[{"role":"user","content":"x"}]}` + ",\n" + ep("s", "three") + "\n]",
			messages:  []string{"user: one", "assistant: ok one", "user: three", "assistant: ok three"},
			episodes:  2,
			warnLines: []int{3}, warnText: "episodes[1].session_id: required",
		},
		{
			name:      "malformed message line",
			in:        msg("user", "a") + "\n" + `{"role":"user","content":` + "\n" + msg("assistant", "b") + "\n",
			messages:  []string{"user: a", "assistant: b"},
			warnLines: []int{2}, warnText: "malformed JSON",
		},
		{
			name:      "invalid message line",
			in:        msg("user", "a") + "\n" + msg("tool", "t") + "\n" + msg("assistant", "b"),
			messages:  []string{"user: a", "assistant: b"},
			warnLines: []int{2}, warnText: "must be user or assistant",
		},
		{
			name:      "invalid message in an array",
			in:        "[\n" + msg("user", "a") + ",\n" + msg("robot", "r") + ",\n" + msg("assistant", "b") + "\n]",
			messages:  []string{"user: a", "assistant: b"},
			warnLines: []int{3}, warnText: "messages[1].role: must be user or assistant",
		},
		{
			name: "invalid message in a messages object",
			in: "{\n  \"session_id\": \"chat\",\n  \"messages\": [\n    " + msg("user", "a") + ",\n    {\"role\": \"user\"},\n    " +
				msg("assistant", "b") + "\n  ]\n}",
			messages:  []string{"user: a", "assistant: b"},
			warnLines: []int{5}, warnText: "messages[1].content: required",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			trs, err := ReadImprint(strings.NewReader(tt.in), "/data/in.jsonl")
			if err != nil {
				t.Fatalf("the whole file was rejected: %v", err)
			}
			var msgs []imprint.Message
			var warns []Warning
			episodes := 0
			for _, tr := range trs {
				msgs = append(msgs, tr.Messages...)
				warns = append(warns, tr.Warnings...)
				episodes += len(tr.Episodes)
			}
			if diff := cmp.Diff(tt.messages, contents(msgs)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if episodes != tt.episodes {
				t.Errorf("%d episodes, want %d", episodes, tt.episodes)
			}
			var lines []int
			for _, w := range warns {
				lines = append(lines, w.Line)
				if w.File != "/data/in.jsonl" || !strings.Contains(w.Message, tt.warnText) {
					t.Errorf("warning %+v: want file /data/in.jsonl and %q", w, tt.warnText)
				}
				if strings.Contains(w.Message, "/data/in.jsonl") {
					t.Errorf("warning message repeats the file: %q", w.Message)
				}
			}
			if diff := cmp.Diff(tt.warnLines, lines); diff != "" {
				t.Errorf("warning lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadImprintMendedLineKeepsIDs imports a message stream with a broken
// line, then the same stream with the line mended: the messages read the
// first time keep their derived ids, so the second import adds only the
// mended one.
func TestReadImprintMendedLineKeepsIDs(t *testing.T) {
	t.Parallel()
	broken := `{"role":"user","content":"a"}` + "\n" + `{"role":"assistant","content":` + "\n" + `{"role":"user","content":"c"}`
	mended := `{"role":"user","content":"a"}` + "\n" + `{"role":"assistant","content":"b"}` + "\n" + `{"role":"user","content":"c"}`
	ids := func(in string) map[string]string {
		trs, err := ReadImprint(strings.NewReader(in), "chat.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, m := range trs[0].Messages {
			out[m.Content] = m.ID
		}
		return out
	}
	before, after := ids(broken), ids(mended)
	if len(before) != 2 || len(after) != 3 {
		t.Fatalf("messages read: %v then %v", before, after)
	}
	for content, id := range before {
		if after[content] != id {
			t.Errorf("message %q: id %s became %s once the line before it was mended", content, id, after[content])
		}
	}
}

// TestReadImprintNothingUsable: a file with no usable line is still an
// error naming file and line, and the strict readers used by capture and
// record still reject a file with one bad line.
func TestReadImprintNothingUsable(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"only invalid episodes", `{"session_id":"s","turns":[]}` + "\n" + `{"session_id":"s"}`, "in.jsonl: line 1: turns: must not be empty"},
		{"only invalid messages", `{"role":"tool","content":"x"}` + "\n" + `{"role":"user"}`, "in.jsonl: line 1: role: must be user or assistant"},
		{"broken pretty document", "{\n  \"session_id\": \"s\",\n  \"turns\": [\n}", "in.jsonl: line 4"},
		{"mostly broken lines", "{\n" + `{"session_id":"s","turns":[{"role":"user","content":"x"}]}` + "\n}\n]", "in.jsonl"},
		{"empty", "\n \n", "empty input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			trs, err := ReadImprint(strings.NewReader(tt.in), "in.jsonl")
			if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v (transcripts %+v), want ErrInvalid naming %q", err, trs, tt.want)
			}
		})
	}
	good := `{"session_id":"s","turns":[{"role":"user","content":"hi"}]}`
	if _, _, err := wire.ReadEpisodes(strings.NewReader(good+"\n{oops\n"+good), "in.jsonl"); !errors.Is(err, imprint.ErrInvalid) ||
		!strings.Contains(err.Error(), "line 2: malformed JSON") {
		t.Errorf("ReadEpisodes with a malformed line: err = %v, want ErrInvalid naming line 2", err)
	}
	if _, err := wire.ReadMessageDoc(strings.NewReader(`{"role":"user","content":"a"}`+"\n{oops\n"), "in.jsonl", "s"); !errors.Is(err, imprint.ErrInvalid) ||
		!strings.Contains(err.Error(), "line 2: malformed JSON") {
		t.Errorf("ReadMessageDoc with a malformed line: err = %v, want ErrInvalid naming line 2", err)
	}
	if _, err := wire.ReadMessageDoc(strings.NewReader(`{"role":"user","content":"a"}`+"\n"+`{"role":"tool","content":"t"}`), "in.jsonl", "s"); !errors.Is(err, imprint.ErrInvalid) {
		t.Errorf("ReadMessageDoc with an invalid message: err = %v, want ErrInvalid", err)
	}
}

func FuzzReadImprint(f *testing.F) {
	f.Add([]byte(episodeJSON))
	f.Add([]byte(`{"session_id":"s","turns":[{"role":"user","content":"a"}]}` + "\n{oops\n" + `{"session_id":"t","turns":[{"role":"tool"}]}`))
	f.Add([]byte(`{"role":"user","content":"a"}` + "\n" + `{"role":"tool","content":"b"}` + "\n[1,"))
	f.Add([]byte(`{"session_id":"s","scope":{"tenant":"t"},"messages":[{"role":"user","content":[{"type":"text","text":"x"}]},{}]}`))
	f.Add([]byte("[\n{\"session_id\":\"s\",\"turns\":[{\"role\":\"user\",\"content\":\"x\",\"ts\":1}]},\n7\n]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		trs, err := ReadImprint(bytes.NewReader(data), "f.jsonl")
		if err != nil {
			if !errors.Is(err, imprint.ErrInvalid) {
				t.Fatalf("error of unexpected kind: %v", err)
			}
			return
		}
		for _, tr := range trs {
			if strings.TrimSpace(tr.SessionID) == "" {
				t.Fatalf("transcript without session: %+v", tr)
			}
			for _, m := range tr.Messages {
				if m.ID == "" || (m.Role != imprint.RoleUser && m.Role != imprint.RoleAssistant) {
					t.Fatalf("unusable message %+v", m)
				}
			}
			for _, ep := range tr.Episodes {
				if len(ep.Turns) == 0 {
					t.Fatalf("episode without turns: %+v", ep)
				}
			}
			for _, w := range tr.Warnings {
				if w.File != "f.jsonl" {
					t.Fatalf("warning without the file: %+v", w)
				}
			}
		}
	})
}
