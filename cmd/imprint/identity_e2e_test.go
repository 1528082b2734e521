package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/sqlite"
)

// storedRecords is what a data dir holds for one scope: the ids of its
// messages (session/id), episodes and traces, each sorted, and the
// workspaces they carry.
type storedRecords struct {
	Messages, Episodes, Traces []string
	Workspaces                 []string
}

// readRecords reads the records of scope in dir's store (no service may
// hold it).
func readRecords(t *testing.T, dir string, scope imprint.Scope) storedRecords {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out storedRecords
	ws := map[string]bool{}
	sessions, err := db.ListSessions(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		msgs, err := db.MessagesBefore(ctx, scope, s.ID, math.MaxInt64, 10000)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			out.Messages = append(out.Messages, s.ID+"/"+m.ID)
			ws["message "+m.Workspace] = true
		}
	}
	eps, err := db.ListEpisodes(ctx, scope, imprint.EpisodeFilter{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eps {
		out.Episodes = append(out.Episodes, e.ID)
		ws["episode "+e.Workspace] = true
	}
	trs, err := db.ListTraces(ctx, scope, imprint.TraceFilter{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trs {
		out.Traces = append(out.Traces, tr.ID)
		ws["trace "+tr.Workspace] = true
	}
	for w := range ws {
		out.Workspaces = append(out.Workspaces, w)
	}
	for _, l := range [][]string{out.Messages, out.Episodes, out.Traces, out.Workspaces} {
		sort.Strings(l)
	}
	return out
}

// TestClaudeCodeHooksAndImportAgree is issue 13's scenario on the built
// binary: the Stop hook on a growing real transcript, then `imprint
// import` of the same project folder, then the hooks again (with their
// state, then without it) leave exactly what a single import leaves: the
// same messages, episodes and traces under the same ids, in the scope of
// agent claude-code (neither --agent nor IMPRINT_AGENT given), in the
// transcript's workspace (its cwd).
func TestClaudeCodeHooksAndImportAgree(t *testing.T) {
	t.Parallel()
	lines := transcriptLines(t, "representative_messages.jsonl")
	projects := t.TempDir()
	project := filepath.Join(projects, "-tmp")
	if err := os.Mkdir(project, 0o700); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(project, "test_session.jsonl")
	write := func(n int) {
		t.Helper()
		if err := os.WriteFile(transcript, []byte(strings.Join(lines[:n], "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	scope := imprint.Scope{Tenant: "default", User: "default", Agent: "claude-code"}

	// A single import of the whole transcript.
	single := t.TempDir()
	write(len(lines))
	if r := runBin(t, map[string]string{"IMPRINT_DATA_DIR": single}, "", "import", projects); r.code != 0 {
		t.Fatalf("import: exit %d: %s", r.code, r.stderr)
	}
	want := readRecords(t, single, scope)
	if len(want.Messages) < 6 || len(want.Episodes) < 3 || len(want.Traces) < 3 {
		t.Fatalf("the import stored too little to compare: %+v", want)
	}
	if d := cmp.Diff([]string{"episode /tmp", "message /tmp", "trace /tmp"}, want.Workspaces); d != "" {
		t.Errorf("workspaces of the import (-want +got):\n%s", d)
	}

	// Hooks while the transcript grows, an import, hooks again.
	dir := t.TempDir()
	hookDir := t.TempDir()
	hooks := func(label string) {
		t.Helper()
		s := startInProc(t, dir, map[string]string{"IMPRINT_EXTRACTION_IDLE": "1h"})
		env := map[string]string{"IMPRINT_SERVER": s.URL, "IMPRINT_DATA_DIR": hookDir}
		stop := hookPayloadJSON(t, "Stop", "test_session", transcript, "")
		if r := runBin(t, env, stop, "hook", "claude-code", "Stop"); r.code != 0 || r.stderr != "" {
			t.Fatalf("%s: Stop hook: exit %d: %s", label, r.code, r.stderr)
		}
		s.drain(t)
		if code := s.stop(); code != 0 {
			t.Fatalf("%s: serve exit %d", label, code)
		}
	}
	write(4) // two requests answered
	hooks("first turns")
	write(8)
	hooks("transcript grown")
	write(len(lines))
	if r := runBin(t, map[string]string{"IMPRINT_DATA_DIR": dir}, "", "import", projects); r.code != 0 {
		t.Fatalf("import after the hooks: exit %d: %s", r.code, r.stderr)
	}
	hooks("after the import")
	if err := os.RemoveAll(filepath.Join(hookDir, "hooks")); err != nil {
		t.Fatal(err)
	}
	hooks("hook state lost")
	if r := runBin(t, map[string]string{"IMPRINT_DATA_DIR": dir}, "", "import", projects); r.code != 0 {
		t.Fatalf("import again: exit %d: %s", r.code, r.stderr)
	}
	got := readRecords(t, dir, scope)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("hooks + import vs a single import (-single +hooks):\n%s", d)
	}
	if other := readRecords(t, dir, imprint.DefaultScope()); len(other.Messages)+len(other.Episodes)+len(other.Traces) > 0 {
		t.Errorf("records in agent default, not claude-code: %+v", other)
	}
}

// TestOpenClawImportsAgree: an OpenClaw session imported while it grows and
// again once complete leaves what one import of the complete session
// leaves, under agent openclaw and the session's cwd; --agent and
// IMPRINT_AGENT win over that default, in that order.
func TestOpenClawImportsAgree(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "importer", "testdata", "openclaw", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	file := filepath.Join(t.TempDir(), "oc-sess-1.jsonl")
	write := func(n int) {
		t.Helper()
		if err := os.WriteFile(file, []byte(strings.Join(lines[:n], "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	importInto := func(dir string, env map[string]string, args ...string) {
		t.Helper()
		full := map[string]string{"IMPRINT_DATA_DIR": dir}
		for k, v := range env {
			full[k] = v
		}
		if r := runBin(t, full, "", append([]string{"import", file}, args...)...); r.code != 0 {
			t.Fatalf("import %v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	scope := imprint.Scope{Tenant: "default", User: "default", Agent: "openclaw"}
	single := t.TempDir()
	write(len(lines))
	importInto(single, nil)
	want := readRecords(t, single, scope)
	if len(want.Messages) == 0 || len(want.Traces) == 0 {
		t.Fatalf("the import stored too little to compare: %+v", want)
	}
	if d := cmp.Diff([]string{"episode /home/me", "message /home/me", "trace /home/me"}, want.Workspaces); d != "" {
		t.Errorf("workspaces (-want +got):\n%s", d)
	}

	grown := t.TempDir()
	write(len(lines) / 2)
	importInto(grown, nil)
	write(len(lines))
	importInto(grown, nil)
	importInto(grown, nil)
	if d := cmp.Diff(want, readRecords(t, grown, scope)); d != "" {
		t.Errorf("imports while growing vs one import (-one +growing):\n%s", d)
	}

	// The precedence of the agent: --agent > IMPRINT_AGENT > the source's.
	env := t.TempDir()
	importInto(env, map[string]string{"IMPRINT_AGENT": "from-env"})
	flag := t.TempDir()
	importInto(flag, map[string]string{"IMPRINT_AGENT": "from-env"}, "--agent", "from-flag")
	for _, c := range []struct {
		dir, agent string
	}{{env, "from-env"}, {flag, "from-flag"}} {
		sc := imprint.Scope{Tenant: "default", User: "default", Agent: c.agent}
		if got := readRecords(t, c.dir, sc); len(got.Messages) != len(want.Messages) {
			t.Errorf("agent %s holds %d messages, want %d", c.agent, len(got.Messages), len(want.Messages))
		}
		if got := readRecords(t, c.dir, scope); len(got.Messages) != 0 {
			t.Errorf("with agent %s chosen, agent openclaw still got %d messages", c.agent, len(got.Messages))
		}
	}
}

// TestWorkspaceFlagsNarrow runs the CLI on the built binary: records of
// three sessions, two in projects and one in none, are extracted; listings,
// search and recall without --workspace cover every workspace, with one
// they narrow to it (recall keeping the workspace-less instruction); an
// import with --workspace files everything under that workspace; a bad
// --workspace is exit 2.
func TestWorkspaceFlagsNarrow(t *testing.T) {
	t.Parallel()
	env := map[string]string{"IMPRINT_DATA_DIR": t.TempDir()}
	run := func(args ...string) result {
		t.Helper()
		r := runBin(t, env, "", args...)
		if r.code != 0 {
			t.Fatalf("imprint %v: exit %d: %s", args, r.code, r.stderr)
		}
		return r
	}
	for _, s := range []struct{ session, ws, rule string }{
		{"app", "/src/app", "From now on, always use pnpm in this repo."},
		{"site", "/src/site", "From now on, always use yarn in this repo."},
		{"home", "", "From now on, always answer in British English."},
	} {
		doc := `{"session_id":"` + s.session + `","workspace":"` + s.ws + `","messages":[{"role":"user","content":"` + s.rule + `"}]}`
		run("record", writeTemp(t, s.session+".json", doc))
	}
	run("extract")
	count := func(args ...string) int {
		t.Helper()
		return len(jsonLines[imprint.Memory](t, run(append([]string{"memories", "--json"}, args...)...)))
	}
	if all, app := count(), count("--workspace", "/src/app"); all != 3 || app != 1 {
		t.Errorf("memories: %d in all, %d in /src/app; want 3 and 1", all, app)
	}
	mems := jsonLines[imprint.Memory](t, run("memories", "--json", "--workspace", "/src/site"))
	if len(mems) != 1 || !strings.Contains(mems[0].Content, "yarn") || mems[0].Workspace != "/src/site" {
		t.Errorf("memories of /src/site = %+v, want the yarn rule with its workspace", mems)
	}
	recall := run("recall", "--workspace", "/src/app", "which package manager").stdout
	if !strings.Contains(recall, "pnpm") || !strings.Contains(recall, "British English") || strings.Contains(recall, "yarn") {
		t.Errorf("recall in /src/app wants pnpm and the global rule, not yarn:\n%s", recall)
	}
	if all := run("recall", "which package manager").stdout; !strings.Contains(all, "pnpm") || !strings.Contains(all, "yarn") {
		t.Errorf("recall without a workspace wants every workspace's rules:\n%s", all)
	}
	for _, h := range jsonLines[imprint.Hit](t, run("search", "--json", "--workspace", "/src/site", "always use pnpm yarn")) {
		if strings.Contains(h.Text, "pnpm") {
			t.Errorf("search in /src/site found %s %q of /src/app", h.Kind, h.Text)
		}
	}

	lines := transcriptLines(t, "representative_messages.jsonl")
	transcript := writeTemp(t, "test_session.jsonl", strings.Join(lines, "\n")+"\n")
	run("import", "--workspace", "/w/x", transcript)
	traces := func(ws string) int {
		t.Helper()
		return len(jsonLines[imprint.Trace](t, run("traces", "--json", "--agent", "claude-code", "--limit", "0", "--workspace", ws)))
	}
	if got, cwd := traces("/w/x"), traces("/tmp"); got == 0 || cwd != 0 {
		t.Errorf("traces: %d in --workspace /w/x, %d in the transcript's cwd; want all in /w/x", got, cwd)
	}
	if r := runBin(t, env, "", "traces", "--workspace", "a\x01b"); r.code != 2 {
		t.Errorf("a bad --workspace: exit %d, want 2", r.code)
	}
}

// TestPromptHookRecallsInTheSessionsWorkspace: once the Stop hook posted a
// session's records in its project (the transcript's cwd), the prompt hook
// of that session recalls that project's rules and the global ones, even
// from a subfolder, never another project's.
func TestPromptHookRecallsInTheSessionsWorkspace(t *testing.T) {
	t.Parallel()
	s := startInProc(t, t.TempDir(), map[string]string{"IMPRINT_EXTRACTION_IDLE": "1h"})
	env := map[string]string{"IMPRINT_SERVER": s.URL, "IMPRINT_DATA_DIR": t.TempDir()}
	for _, r := range []struct{ session, ws, rule string }{
		{"tmp-rules", "/tmp", "From now on, always use pnpm in this repo."},
		{"site-rules", "/src/site", "From now on, always use yarn in this repo."},
		{"home-rules", "", "From now on, always answer in British English."},
	} {
		doc := `{"session_id":"` + r.session + `","workspace":"` + r.ws + `","messages":[{"role":"user","content":"` + r.rule + `"}]}`
		for _, args := range [][]string{{"record", "--agent", "claude-code", writeTemp(t, r.session+".json", doc)}, {"extract", "--agent", "claude-code", "--session", r.session}} {
			if res := runBin(t, env, "", args...); res.code != 0 {
				t.Fatalf("imprint %v: exit %d: %s", args, res.code, res.stderr)
			}
		}
	}
	transcript := writeTemp(t, "test_session.jsonl", strings.Join(transcriptLines(t, "representative_messages.jsonl"), "\n")+"\n")
	if r := runBin(t, env, hookPayloadJSON(t, "Stop", "test_session", transcript, ""), "hook", "claude-code", "Stop"); r.code != 0 || r.stderr != "" {
		t.Fatalf("Stop hook: exit %d: %s", r.code, r.stderr)
	}
	s.drain(t)
	payload := `{"session_id":"test_session","transcript_path":"` + transcript + `","cwd":"/tmp/sub","hook_event_name":"UserPromptSubmit","prompt":"which package manager do we use?"}`
	r := runBin(t, env, payload, "hook", "claude-code", "UserPromptSubmit")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("UserPromptSubmit hook: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "pnpm") || !strings.Contains(r.stdout, "British English") || strings.Contains(r.stdout, "yarn") {
		t.Errorf("prompt hook in /tmp/sub wants the /tmp and global rules, not /src/site's:\n%s", r.stdout)
	}
}
