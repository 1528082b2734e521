package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// ccLine is one Claude Code transcript line of a user or assistant.
func ccLine(n int, role, session, text string) string {
	return fmt.Sprintf(`{"type":%q,"sessionId":%q,"uuid":"u%d","timestamp":"2026-05-01T10:%02d:00Z","message":{"role":%q,"content":%q}}`,
		role, session, n, n, role, text) + "\n"
}

// TestImportSkipsUnusableLines checks `imprint import` of a transcript with
// a line of invalid UTF-8, a line whose session id holds a NUL and a line
// with a time of year -292275055: each is a warning naming its line, and
// the rest of the file imports as written.
func TestImportSkipsUnusableLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := ccLine(1, "user", "s1", "I moved to Porto last spring") +
		strings.Replace(ccLine(2, "assistant", "s1", "Nice, Porto is lovely"), "lovely", "lov\xffely", 1) +
		strings.Replace(ccLine(3, "user", "s1", "I work as a nurse"), `"sessionId":"s1"`, `"sessionId":"s1\u0000x"`, 1) +
		strings.Replace(ccLine(4, "user", "s1", "My sister lives in Lisbon"), `"timestamp":"2026-05-01T10:04:00Z"`, `"timestamp":9223372036854775807`, 1) +
		ccLine(5, "assistant", "s1", "Noted: your sister lives in Lisbon")
	file := writeTemp(t, "s1.jsonl", content)
	r := runImprint(t, nil, "import", "--json", "--format", "claude-code", "--data-dir", dir, file)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	sum := jsonLines[importOut](t, r)[0]
	lines := map[int]string{}
	for _, w := range sum.Warnings {
		if line, ok := w["line"].(float64); ok {
			lines[int(line)] = fmt.Sprint(w["message"])
		}
	}
	if !strings.Contains(lines[2], "not valid UTF-8") || !strings.Contains(lines[3], "sessionId must not contain control characters") {
		t.Errorf("warnings = %+v, want lines 2 (UTF-8) and 3 (session id)", sum.Warnings)
	}
	// Line 4's time is unusable: the turn takes its predecessor's, it is not stored at year -292275055.
	if sum.MessagesRecorded != 3 {
		t.Errorf("recorded %d messages, want the 3 usable lines: %+v", sum.MessagesRecorded, sum)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "imprint.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var bad int
	if err := db.QueryRow(`SELECT COUNT(*) FROM messages WHERE timestamp NOT LIKE '2026-05-01T%'`).Scan(&bad); err != nil || bad != 0 {
		t.Errorf("%d messages stored with a time other than the file's (%v)", bad, err)
	}
	// A Claude Code import goes to agent claude-code.
	got := runImprint(t, nil, "search", "--json", "--data-dir", dir, "--agent", "claude-code", "--kind", "message", "sister Lisbon")
	if got.code != 0 || !strings.Contains(got.stdout, "My sister lives in Lisbon") || strings.Contains(got.stdout, "nurse") {
		t.Errorf("search: exit %d: %s %s", got.code, got.stdout, got.stderr)
	}
}

// TestRecordRejectsUnusableInput checks `imprint record`: a session id
// with a NUL, a message id of 300 bytes or text that is not UTF-8 exits 2
// naming the field or line, and records nothing.
func TestRecordRejectsUnusableInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ name, doc, says string }{
		{"NUL session id", `{"session_id":"s\u0000","messages":[{"role":"user","content":"hi"}]}`, "session_id must not contain control characters"},
		{"long message id", `{"session_id":"s","messages":[{"id":"` + strings.Repeat("m", 300) + `","role":"user","content":"hi"}]}`, "messages[0].id is longer than 256 bytes"},
		{"invalid UTF-8", "{\"session_id\":\"s\",\n\"messages\":[{\"role\":\"user\",\"content\":\"h\xe9\"}]}", "line 2: text is not valid UTF-8"},
	} {
		r := runImprint(t, nil, "record", "--json", "--data-dir", dir, writeTemp(t, "m.json", tc.doc))
		if r.code != 2 || !strings.Contains(r.stderr, tc.says) {
			t.Errorf("%s: exit %d, stderr %s; want 2 saying %q", tc.name, r.code, r.stderr, tc.says)
		}
	}
	r := runImprint(t, nil, "sessions", "--json", "--data-dir", dir)
	if strings.Contains(r.stdout, `"id"`) {
		t.Errorf("sessions after the rejected records: %s", r.stdout)
	}
}
