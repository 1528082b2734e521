package importer

import (
	"errors"
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/wire"
)

func ccLineOf(session, uuid, text string) string {
	return `{"type":"user","sessionId":"` + session + `","uuid":"` + uuid + `","timestamp":"2026-05-01T10:00:00Z","message":{"role":"user","content":"` + text + `"}}`
}

// TestClaudeCodeBadLinesAreWarnings checks that a transcript line with
// invalid UTF-8, a lone surrogate escape or an unusable id is skipped with
// a warning naming its line, and the other lines still import as sent.
func TestClaudeCodeBadLinesAreWarnings(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		ccLineOf("s", "1", "first café"),
		ccLineOf("s", "2", "bad \xff byte"),
		ccLineOf("s", "3", `half \ud83d of an emoji`),
		ccLineOf("s\\u0000x", "4", "NUL in the session id"),
		ccLineOf("s", strings.Repeat("u", 300), "a long uuid"),
		ccLineOf("s", "6", `last \ud83d\ude00`),
	}, "\n")
	tr, err := ReadClaudeCode(strings.NewReader(in), "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range tr.Messages {
		texts = append(texts, m.Content)
	}
	if d := strings.Join(texts, "|"); d != "first café|last 😀" {
		t.Errorf("messages = %q, want the first and last lines", d)
	}
	want := map[int]string{2: "not valid UTF-8 (byte 117 of the line)", 3: `lone UTF-16 surrogate escape \ud83d`, 4: "sessionId must not contain control characters", 5: "uuid is longer than 256 bytes"}
	got := map[int]string{}
	for _, w := range tr.Warnings {
		got[w.Line] = w.Message
	}
	for line, says := range want {
		if !strings.Contains(got[line], says) || !strings.Contains(got[line], "line skipped") {
			t.Errorf("warning of line %d = %q, want it to say %q", line, got[line], says)
		}
	}
}

// TestImprintInputHygiene checks the §4.1/§4.2 readers (what POST
// /v1/episodes, /v1/messages and /v1/sessions/{id}/turns parse): bad ids,
// times and text fail naming the field or line; a lenient import keeps the
// other lines.
func TestImprintInputHygiene(t *testing.T) {
	t.Parallel()
	ep := func(sid, turnID, ts string) string {
		return `{"session_id":"` + sid + `","turns":[{"role":"user","content":"hi"},{"id":"` + turnID + `","role":"assistant","content":"ok","ts":` + ts + `}]}`
	}
	for _, tc := range []struct{ name, in, says string }{
		{"NUL session id", ep(`s\u0000`, "a1", `"2026-05-01T10:00:00Z"`), "session_id must not contain control characters (NUL at byte 1)"},
		{"long session id", ep(strings.Repeat("s", 100_000), "a1", `"2026-05-01T10:00:00Z"`), "session_id is longer than 256 bytes"},
		{"tab in a turn id", ep("s", `a\t1`, `"2026-05-01T10:00:00Z"`), "turns[1].id must not contain control characters"},
		{"epoch of MaxInt64", ep("s", "a1", `9223372036854775807`), "turns[1].ts: time: epoch milliseconds"},
		{"year 10000", ep("s", "a1", `"10000-01-01T00:00:00Z"`), "turns[1].ts"},
		{"before 1970", ep("s", "a1", `"1969-07-20T20:17:00Z"`), "turns[1].ts: time \"1969-07-20T20:17:00Z\": year 1969 is outside 1970-9999"},
		{"invalid UTF-8", strings.Replace(ep("s", "a1", "0"), `"ok"`, "\"o\xc0k\"", 1), "line 1: text is not valid UTF-8"},
		{"lone surrogate", strings.Replace(ep("s", "a1", "0"), `"ok"`, `"\udead"`, 1), `lone UTF-16 surrogate escape \udead`},
		{"scope part", `{"session_id":"s","scope":{"tenant":"t","user":"u\u0007","agent":"a"},"turns":[{"role":"user","content":"hi"}]}`, "scope.user must not contain control characters"},
	} {
		_, _, err := wire.ReadEpisodes(strings.NewReader(tc.in), "")
		if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: ReadEpisodes error %v, want ErrInvalid saying %q", tc.name, err, tc.says)
		}
	}
	for _, tc := range []struct{ name, in, says string }{
		{"message id", `{"session_id":"s","messages":[{"role":"user","content":"a"},{"id":"m\u001b[2J","role":"user","content":"b"}]}`, "messages[1].id must not contain control characters"},
		{"session id", `{"session_id":"` + strings.Repeat("é", 200) + `","messages":[{"role":"user","content":"a"}]}`, "session_id is longer than 256 bytes"},
		{"timestamp", `{"session_id":"s","messages":[{"role":"user","content":"a","timestamp":-5}]}`, "messages[0].timestamp"},
	} {
		_, err := wire.ReadMessageDoc(strings.NewReader(tc.in), "", "")
		if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: ReadMessageDoc error %v, want ErrInvalid saying %q", tc.name, err, tc.says)
		}
	}

	// A JSONL import: the bad lines are warnings naming them, the rest imports.
	in := strings.Join([]string{
		`{"session_id":"s","turns":[{"role":"user","content":"one","ts":"2026-05-01T10:00:00Z"}]}`,
		"{\"session_id\":\"s\",\"turns\":[{\"role\":\"user\",\"content\":\"t\xe9\"}]}",
		`{"session_id":"s","turns":[{"role":"user","content":"three","ts":99999999999999999}]}`,
		`{"session_id":"s","turns":[{"role":"user","content":"four","ts":"2026-05-01T10:04:00Z"}]}`,
	}, "\n")
	trs, err := ReadImprint(strings.NewReader(in), "eps.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 1 || len(trs[0].Episodes) != 2 || trs[0].Episodes[1].Turns[0].Content != "four" {
		t.Fatalf("transcripts = %+v, want session s with the episodes of lines 1 and 4", trs)
	}
	lines := map[int]string{}
	for _, w := range trs[0].Warnings {
		lines[w.Line] = w.Message
	}
	if !strings.Contains(lines[2], "not valid UTF-8") || !strings.Contains(lines[3], "turns[0].ts") || len(lines) != 2 {
		t.Errorf("warnings = %+v, want lines 2 (UTF-8) and 3 (time)", trs[0].Warnings)
	}
}

// TestDocumentReadersRejectInvalidText checks the readers of whole JSON
// documents: invalid text fails naming the line, nothing is read.
func TestDocumentReadersRejectInvalidText(t *testing.T) {
	t.Parallel()
	doc := "[\n  {\"title\": \"ok\"},\n  {\"title\": \"b\xffd\"}\n]"
	for name, read := range map[string]func() error{
		"chatgpt":  func() error { _, err := ReadChatGPT(strings.NewReader(doc), "c.json"); return err },
		"locomo":   func() error { _, err := ReadLoCoMo(strings.NewReader(doc), "l.json", time.UTC); return err },
		"taubench": func() error { _, err := ReadTauBench(strings.NewReader(doc), "t.json"); return err },
		"imprint":  func() error { _, err := ReadImprint(strings.NewReader(doc), "i.json"); return err },
	} {
		err := read()
		if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), "line 3: text is not valid UTF-8") {
			t.Errorf("%s: error %v, want ErrInvalid naming line 3", name, err)
		}
	}
}

// TestTranscriptsWithUnusableIDs checks the last net over every reader: a
// session with an unusable id is left out with a warning, and so is a
// message or episode with one; the rest stays.
func TestTranscriptsWithUnusableIDs(t *testing.T) {
	t.Parallel()
	good := Transcript{Source: "x", SessionID: "ok",
		Messages: []imprint.Message{{ID: "m1", Content: "a"}, {ID: "m\x002", Content: "b"}},
		Episodes: []imprint.Episode{{ID: "e1", Turns: []imprint.Turn{{ID: "t\n1"}}}, {ID: "e2"}}}
	bad := Transcript{Source: "x", SessionID: "s\x7f", Messages: []imprint.Message{{ID: "m9"}}, Warnings: []Warning{{File: "f", Line: 3, Message: "earlier"}}}
	trs, err := cleanTranscripts([]Transcript{bad, good}, "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 1 || trs[0].SessionID != "ok" || len(trs[0].Messages) != 1 || len(trs[0].Episodes) != 1 || trs[0].Episodes[0].ID != "e2" {
		t.Fatalf("kept %+v", trs)
	}
	var msgs []string
	for _, w := range trs[0].Warnings {
		msgs = append(msgs, w.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, says := range []string{"earlier", "session skipped: session id must not contain control characters", "message 1 skipped", "episode 0 skipped: turns[0].id"} {
		if !strings.Contains(all, says) {
			t.Errorf("warnings %q do not say %q", all, says)
		}
	}
	if _, err := cleanTranscripts([]Transcript{bad}, "f"); !errors.Is(err, imprint.ErrInvalid) {
		t.Errorf("only a bad session: error %v, want ErrInvalid", err)
	}
}
