package main

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// flagsWindowRe finds a window's messages in the extraction prompt.
var flagsWindowRe = regexp.MustCompile(`(?m)^\[([^\]]+)\] \[(user|assistant)\] \[`)

// TestExtractAllSupersedeAndMemoryFlags drives the CLI flags of issue 4
// req 11 with the fake LLM: two recorded sessions are both extracted by
// `extract --all`; a correction recorded in a third session supersedes one
// memory; the superseded version is listed only with
// `memories --all-versions`, and `--session` keeps the memories extracted
// from that session.
func TestExtractAllSupersedeAndMemoryFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := llmtest.NewServer(t)
	env := map[string]string{
		"IMPRINT_LLM_PROVIDER":                "openai",
		"IMPRINT_LLM_BASE_URL":                srv.URL,
		"IMPRINT_LLM_MODEL":                   "test-model",
		"IMPRINT_LLM_MAX_RETRIES":             "0",
		"IMPRINT_EXTRACTION_RECALL_MIN_SCORE": "0.05",
	}
	// The model turns each user message of a window into the memory the
	// test names for it.
	memoryOf := map[string]string{
		"h1": "The user lives in Berlin.",
		"w1": "The user's favourite editor is Helix.",
		"c1": "The user lives in Munich.",
	}
	srv.Handle("extract.l1.v1", func(req llmtest.Request) llmtest.Reply {
		i := strings.Index(req.User, "NEW MESSAGES:")
		var mems []any
		var ids []string
		for _, m := range flagsWindowRe.FindAllStringSubmatch(req.User[max(i, 0):], -1) {
			ids = append(ids, m[1])
			if c, ok := memoryOf[m[1]]; ok && m[2] == "user" {
				mems = append(mems, map[string]any{"content": c, "type": "persona", "priority": 70, "source_message_ids": []string{m[1]}})
			}
		}
		if i < 0 || len(mems) == 0 {
			return llmtest.JSON(map[string]any{"scenes": []any{}})
		}
		return llmtest.JSON(map[string]any{"scenes": []any{map[string]any{"scene_name": "About the user", "message_ids": ids, "memories": mems}}})
	})
	// The judge updates a stored "lives in" memory with a new one, and
	// stores everything else.
	srv.Handle("extract.dedup.v1", func(req llmtest.Request) llmtest.Reply {
		var doc struct {
			Candidates  []struct{ ID, Content string } `json:"candidates"`
			NewMemories []struct {
				ID, Content  string
				CandidateIDs []string `json:"candidate_ids"`
			} `json:"new_memories"`
		}
		if err := json.Unmarshal([]byte(req.User), &doc); err != nil {
			return llmtest.Status(400)
		}
		content := map[string]string{}
		for _, c := range doc.Candidates {
			content[c.ID] = c.Content
		}
		ds := []any{}
		for _, n := range doc.NewMemories {
			d := map[string]any{"record_id": n.ID, "action": "store", "target_ids": []string{}}
			for _, id := range n.CandidateIDs {
				if strings.Contains(n.Content, "lives in") && strings.Contains(content[id], "lives in") {
					d = map[string]any{"record_id": n.ID, "action": "update", "target_ids": []string{id}}
				}
			}
			ds = append(ds, d)
		}
		return llmtest.JSON(map[string]any{"decisions": ds})
	})
	run := func(args ...string) result {
		t.Helper()
		r := runImprint(t, env, append(args, "--data-dir", dir)...)
		if r.code != 0 {
			t.Fatalf("imprint %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r
	}
	record := func(session string, msgs ...map[string]any) {
		t.Helper()
		b, err := json.Marshal(map[string]any{"session_id": session, "messages": msgs})
		if err != nil {
			t.Fatal(err)
		}
		run("record", writeTemp(t, session+".json", string(b)))
	}
	msg := func(id, role, ts, content string) map[string]any {
		return map[string]any{"id": id, "role": role, "timestamp": ts, "content": content}
	}
	record("home", msg("h1", "user", "2026-03-01T09:00:00Z", "I live in Berlin, in a flat near the Spree, and I work from home most days."),
		msg("h2", "assistant", "2026-03-01T09:00:04Z", "Berlin is a good base for remote work."))
	record("work", msg("w1", "user", "2026-03-02T10:00:00Z", "My favourite editor is Helix; I switched from Vim last year and never looked back."),
		msg("w2", "assistant", "2026-03-02T10:00:03Z", "Helix has good defaults for that."))

	type window struct {
		SessionID string `json:"session_id"`
		Success   bool   `json:"success"`
	}
	sessions := map[string]bool{}
	for _, w := range jsonLines[window](t, run("extract", "--json", "--all")) {
		if !w.Success {
			t.Errorf("window of %s failed", w.SessionID)
		}
		sessions[w.SessionID] = true
	}
	if !cmp.Equal(sessions, map[string]bool{"home": true, "work": true}) {
		t.Fatalf("extract --all ran windows of %v, want both sessions", sessions)
	}
	contents := func(args ...string) []string {
		t.Helper()
		out := []string{}
		for _, m := range jsonLines[imprint.Memory](t, run(append([]string{"memories", "--json"}, args...)...)) {
			c := m.Content
			if m.SupersededBy != nil {
				c += " (superseded)"
			}
			out = append(out, c)
		}
		sort.Strings(out)
		return out
	}
	if d := cmp.Diff([]string{"The user lives in Berlin.", "The user's favourite editor is Helix."}, contents()); d != "" {
		t.Fatalf("memories after extract --all (-want +got):\n%s", d)
	}
	if x := jsonLines[window](t, run("extract", "--json", "--all")); len(x) != 0 {
		t.Errorf("a second extract --all found work: %+v", x)
	}

	record("move", msg("c1", "user", "2026-04-10T08:00:00Z", "Correction: I no longer live in Berlin, I moved to Munich last month for the new job."))
	run("extract", "--json", "--session", "move")
	if n := len(srv.RequestsFor("extract.dedup.v1")); n == 0 {
		t.Fatal("the correction never reached the dedup judge")
	}

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"live only by default", nil,
			[]string{"The user lives in Munich.", "The user's favourite editor is Helix."}},
		{"all versions", []string{"--all-versions"},
			[]string{"The user lives in Berlin. (superseded)", "The user lives in Munich.", "The user's favourite editor is Helix."}},
		{"session home", []string{"--session", "home"}, []string{}},
		{"session home, all versions", []string{"--session", "home", "--all-versions"}, []string{"The user lives in Berlin. (superseded)"}},
		{"session work", []string{"--session", "work"}, []string{"The user's favourite editor is Helix."}},
		{"session move", []string{"--session", "move"}, []string{"The user lives in Munich."}},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, contents(tc.args...)); d != "" {
			t.Errorf("%s: memories %v (-want +got):\n%s", tc.name, tc.args, d)
		}
	}
	// The text listing marks the superseded version too.
	text := run("memories", "--all-versions").stdout
	if !strings.Contains(text, "The user lives in Berlin. (superseded)") || strings.Contains(text, "Munich. (superseded)") {
		t.Errorf("memories --all-versions text:\n%s", text)
	}
	// The new version supersedes the old one.
	var berlin, munich imprint.Memory
	for _, m := range jsonLines[imprint.Memory](t, run("memories", "--json", "--all-versions")) {
		switch m.Content {
		case "The user lives in Berlin.":
			berlin = m
		case "The user lives in Munich.":
			munich = m
		}
	}
	if berlin.SupersededBy == nil || *berlin.SupersededBy != munich.ID || !cmp.Equal(munich.Supersedes, []string{berlin.ID}) || munich.Version != 2 {
		t.Errorf("supersedes chain: berlin %+v, munich %+v", berlin, munich)
	}
}
