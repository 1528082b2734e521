package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/imprint-dev/imprint"
)

// This file holds the end-to-end tests of the CLI on the built binary:
// what a user typing imprint (or a host running its hooks) sees.

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// TestMain removes the binary imprintBin built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// imprintBin builds the imprint binary once for the package's tests and
// returns its path.
func imprintBin(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "imprint-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "imprint")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Env = os.Environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// runBin runs the built binary with env as its whole environment (HOME and
// PATH added when missing) and stdin, and returns what it produced.
func runBin(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(imprintBin(t), args...)
	full := map[string]string{"HOME": t.TempDir(), "PATH": os.Getenv("PATH")}
	for k, v := range env {
		full[k] = v
	}
	for k, v := range full {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run imprint %v: %v", args, err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// TestHookNeverBlocks runs `imprint hook claude-code` on the built binary
// as Claude Code would, with every kind of failure: a stopped service, a
// payload that is not JSON, an unknown event, a typo'd flag, a bad config
// value, a bad --server, no event at all. Each exits 0 (Claude Code blocks
// the prompt on exit 2 and reports any other failure) with one warning
// line on stderr naming the cause, and prints nothing on stdout.
func TestHookNeverBlocks(t *testing.T) {
	t.Parallel()
	transcript := sharedFile(t, "claude-code/session_b.jsonl")
	down := map[string]string{"IMPRINT_SERVER": "http://127.0.0.1:1", "IMPRINT_DATA_DIR": t.TempDir()}
	tests := []struct {
		name    string
		env     map[string]string
		payload string
		args    []string
		cause   string
	}{
		{"stopped service on Stop", down, hookPayloadJSON(t, "Stop", "s", transcript, ""), []string{"Stop"}, "post messages"},
		{"stopped service on a prompt", down, hookPayloadJSON(t, "UserPromptSubmit", "s", transcript, "hello"), []string{"UserPromptSubmit"}, "recall"},
		{"stopped service on SessionStart", down, `{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`, []string{"SessionStart"}, "recall standing context"},
		{"payload not JSON", down, "not json", []string{"Stop"}, "not a JSON object"},
		{"unknown event", down, hookPayloadJSON(t, "Stop", "s", transcript, ""), []string{"NoSuchEvent"}, "unknown Claude Code hook event"},
		{"typo'd flag", down, hookPayloadJSON(t, "Stop", "s", transcript, ""), []string{"Stop", "--agnet", "claude-code"}, "unknown flag: --agnet"},
		{"bad config value", map[string]string{"IMPRINT_LLM_PROVIDER": "nope", "IMPRINT_DATA_DIR": t.TempDir()}, hookPayloadJSON(t, "Stop", "s", transcript, ""), []string{"Stop"}, "llm.provider"},
		{"bad --server", down, hookPayloadJSON(t, "Stop", "s", transcript, ""), []string{"Stop", "--server", "127.0.0.1:8420"}, "--server"},
		{"no event", down, hookPayloadJSON(t, "Stop", "s", transcript, ""), nil, "accepts 1 arg"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runBin(t, tc.env, tc.payload, append([]string{"hook", "claude-code"}, tc.args...)...)
			checkHookWarned(t, r, tc.cause)
		})
	}
	for _, tc := range []struct {
		name, cause string
		args        []string
	}{
		{"typo'd host", `unknown host "claude-cod"`, []string{"claude-cod", "UserPromptSubmit"}},
		{"flag and no host", "unknown flag: --bogus", []string{"--bogus"}},
		{"no host", "no host given", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkHookWarned(t, runBin(t, down, "{}", append([]string{"hook"}, tc.args...)...), tc.cause)
		})
	}
}

// checkHookWarned fails t unless the hook run r exited 0 with one warning
// line naming cause on stderr and nothing on stdout.
func checkHookWarned(t *testing.T, r result, cause string) {
	t.Helper()
	if r.code != 0 {
		t.Errorf("exit %d, want 0: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "imprint hook: warning: ") || !strings.Contains(lines[0], cause) {
		t.Errorf("stderr %q: want one line \"imprint hook: warning: …%s…\"", r.stderr, cause)
	}
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing (Claude Code would add it to the context)", r.stdout)
	}
}

// TestSessionStartHookInjectsStandingContextOnce runs the SessionStart hook
// on the built binary against a service holding a standing instruction
// and a persona memory: the first start of a session prints Claude Code's
// SessionStart JSON whose additionalContext has both; a resume of the same
// session prints nothing (the context already has them); after a
// compaction they are injected again; another session gets them too.
func TestSessionStartHookInjectsStandingContextOnce(t *testing.T) {
	t.Parallel()
	s := startInProc(t, t.TempDir(), map[string]string{"IMPRINT_EXTRACTION_IDLE": "1h"})
	env := map[string]string{"IMPRINT_SERVER": s.URL, "IMPRINT_DATA_DIR": t.TempDir(), "IMPRINT_AGENT": "claude-code"}
	msgs := writeTemp(t, "m.json", `{"session_id":"earlier","messages":[
{"id":"u1","role":"user","timestamp":"2026-03-01T09:00:00Z","content":"From now on, always answer in British English."},
{"id":"a1","role":"assistant","timestamp":"2026-03-01T09:00:05Z","content":"Noted."},
{"id":"u2","role":"user","timestamp":"2026-03-01T09:01:00Z","content":"I am a vegetarian and I prefer aisle seats."}]}`)
	for _, args := range [][]string{{"record", msgs}, {"extract", "--session", "earlier"}} {
		if r := runBin(t, env, "", args...); r.code != 0 {
			t.Fatalf("imprint %s: exit %d: %s", args[0], r.code, r.stderr)
		}
	}
	s.drain(t)
	start := func(session, source string) result {
		t.Helper()
		payload := `{"session_id":"` + session + `","transcript_path":"","cwd":"/tmp","hook_event_name":"SessionStart","source":"` + source + `"}`
		r := runBin(t, env, payload, "hook", "claude-code", "SessionStart")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("SessionStart %s %s: exit %d: %s", session, source, r.code, r.stderr)
		}
		return r
	}
	injected := func(r result) string {
		t.Helper()
		var out struct {
			HookSpecificOutput struct {
				HookEventName     string `json:"hookEventName"`
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("SessionStart stdout is not Claude Code's hook JSON: %v\n%s", err, r.stdout)
		}
		if out.HookSpecificOutput.HookEventName != "SessionStart" {
			t.Errorf("hookEventName %q", out.HookSpecificOutput.HookEventName)
		}
		return out.HookSpecificOutput.AdditionalContext
	}
	ctx := injected(start("s1", "startup"))
	for _, want := range []string{"<imprint-recall>", "Standing instructions:\n- Standing instruction from the user: from now on, always answer in British English.",
		"About the user:\n- User is a vegetarian and they prefer aisle seats."} {
		if !strings.Contains(ctx, want) {
			t.Errorf("additionalContext lacks %q:\n%s", want, ctx)
		}
	}
	if r := start("s1", "resume"); r.stdout != "" {
		t.Errorf("a resumed session got the standing context again:\n%s", r.stdout)
	}
	if again := injected(start("s1", "compact")); again != ctx {
		t.Errorf("after a compaction: %q, want the same block again", again)
	}
	if other := injected(start("s2", "startup")); other != ctx {
		t.Errorf("another session: %q, want the same block", other)
	}
}

// TestVersion checks imprint --version on the built binary: the module
// version and, when the toolchain recorded one, the commit it was built
// from, both as `go version -m` reads them from the binary.
func TestVersion(t *testing.T) {
	t.Parallel()
	r := runBin(t, nil, "", "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "imprint ") || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("--version: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	out, err := exec.Command("go", "version", "-m", imprintBin(t)).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			if !strings.HasPrefix(r.stdout, "imprint "+f[2]+" ") {
				t.Errorf("--version %q lacks the module version %s", r.stdout, f[2])
			}
		case len(f) == 2 && strings.HasPrefix(f[1], "vcs.revision="):
			if rev := strings.TrimPrefix(f[1], "vcs.revision="); !strings.Contains(r.stdout, "commit "+rev[:12]) {
				t.Errorf("--version %q lacks the commit %s", r.stdout, rev[:12])
			}
		}
	}
}

// TestServeAddrFlag starts the built binary with serve --addr over an
// IMPRINT_SERVER_ADDR that names another port: the flag wins, and the
// service listens where it says.
func TestServeAddrFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(imprintBin(t), "serve", "--data-dir", dir, "--addr", "127.0.0.1:0")
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "IMPRINT_SERVER_ADDR=127.0.0.1:1"}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-done
	})
	var url string
	for url == "" {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("serve --addr exited (%v) before listening: %s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if m := listenRe.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
	}
	if strings.HasSuffix(url, ":1") {
		t.Fatalf("serve listens on %s: --addr lost to the environment", url)
	}
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz at the --addr address: %d", resp.StatusCode)
	}
}

// TestListingsForNewcomers runs imprint capture, traces and memories on the
// built binary as a user would without --json: the traces listing has a
// header and per trace its id, time, session and episode in aligned
// columns, and says "no reflection" for a step nothing reflected on
// instead of α=0.00 usable=false; an empty memories listing says so.
func TestListingsForNewcomers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"IMPRINT_DATA_DIR": dir}
	ep := `{"session_id":"trip","turns":[
 {"role":"user","content":"Find me a flight SFO to JFK tomorrow","ts":"2026-05-01T10:00:00Z"},
 {"role":"assistant","content":"UA1 is available.","ts":"2026-05-01T10:00:03Z"}]}`
	if r := runBin(t, env, ep, "capture"); r.code != 0 {
		t.Fatalf("capture: exit %d: %s", r.code, r.stderr)
	}
	traces := jsonLines[imprint.Trace](t, runBin(t, env, "", "traces", "--json"))
	if len(traces) != 1 {
		t.Fatalf("traces --json: %+v", traces)
	}
	r := runBin(t, env, "", "traces")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 2 {
		t.Fatalf("traces: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	header, row := lines[0], lines[1]
	for col, want := range map[string]string{"ID": traces[0].ID, "TIME": "2026-05-01 10:00", "SESSION": "trip", "EPISODE": traces[0].EpisodeID, "α": "no reflection"} {
		at := strings.Index(header, col)
		if at < 0 || !strings.HasPrefix(row[min(at, len(row)):], want) {
			t.Errorf("column %s: want %q under it:\n%s\n%s", col, want, header, row)
		}
	}
	if strings.Contains(r.stdout, "usable=false") || strings.Contains(r.stdout, "α=0.00") {
		t.Errorf("a step without reflection shows a score:\n%s", r.stdout)
	}
	if m := runBin(t, env, "", "memories"); m.code != 0 || m.stdout != "no memories\n" {
		t.Errorf("empty memories listing: exit %d %q", m.code, m.stdout)
	}
}

// TestBadInputNamesTheFileOnceAndExits2 runs the built binary on every kind
// of bad input a newcomer feeds it: a folder, a missing file, an empty
// JSON array, malformed JSON, plain text, an agent's transcript given to
// capture or record, a --session that contradicts the file's own. Each
// exits 2, names the file exactly once, and says what is wrong (with the
// line and column of malformed JSON) or what to run instead.
func TestBadInputNamesTheFileOnceAndExits2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	folder := filepath.Join(dir, "transcripts")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	empty := writeFile(t, dir, "empty.json", "[]")
	broken := writeFile(t, dir, "broken.json", "{\"session_id\": \"x\",\n \"turns\": [ }\n")
	badKey := writeFile(t, dir, "badkey.json", `{"title" "x"}`)
	text := writeFile(t, dir, "notes.json", "hello\n")
	missing := filepath.Join(dir, "missing.json")
	transcript := sharedFile(t, "claude-code/session_b.jsonl")
	msgs := writeFile(t, dir, "msgs.json", `{"session_id":"from-file","messages":[{"role":"user","content":"hi"}]}`)
	env := map[string]string{"IMPRINT_DATA_DIR": filepath.Join(dir, "data")}
	tests := []struct {
		args []string
		file string
		want []string
	}{
		{[]string{"capture", folder}, folder, []string{"is a directory", "imprint import " + folder}},
		{[]string{"record", folder}, folder, []string{"is a directory", "imprint import " + folder}},
		{[]string{"eval", "locomo", folder}, folder, []string{"is a directory"}},
		{[]string{"capture", missing}, missing, []string{"no such file or directory"}},
		{[]string{"import", missing}, missing, []string{"no such file or directory"}},
		{[]string{"record", missing}, missing, []string{"no such file or directory"}},
		{[]string{"capture", empty}, empty, []string{"no episodes in it"}},
		{[]string{"import", empty}, empty, []string{"an empty JSON array"}},
		{[]string{"record", "--session", "k", empty}, empty, []string{"no messages in it"}},
		{[]string{"capture", broken}, broken, []string{"line 2", "malformed JSON"}},
		{[]string{"import", broken}, broken, []string{"line 2", "malformed JSON"}},
		{[]string{"import", badKey}, badKey, []string{"malformed JSON: line 1, column 10"}},
		{[]string{"import", text}, text, []string{"not JSON", "line 1, column 1"}},
		{[]string{"capture", transcript}, transcript, []string{"a claude-code transcript", "run `imprint import " + transcript + "`"}},
		{[]string{"record", transcript}, transcript, []string{"a claude-code transcript", "run `imprint import " + transcript + "`"}},
		{[]string{"record", "--session", "from-flag", msgs}, msgs, []string{`--session "from-flag"`, `session_id "from-file"`}},
		{[]string{"memories", "--config", missing}, missing, []string{"config file", "no such file or directory"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args[:len(tc.args)-1], " ")+" "+filepath.Base(tc.file), func(t *testing.T) {
			t.Parallel()
			r := runBin(t, env, "", tc.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2: %s", r.code, r.stderr)
			}
			if n := strings.Count(r.stderr, tc.file); n != 1+strings.Count(strings.Join(tc.want, " "), tc.file) {
				t.Errorf("stderr names %s %d times:\n%s", tc.file, n, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// TestDryRunSpeaksInTheFutureTense runs import --dry-run on the built binary
// over a folder of four Claude Code transcripts: it says nothing was
// written, what the import would do, and counts four files (not one
// folder).
func TestDryRunSpeaksInTheFutureTense(t *testing.T) {
	t.Parallel()
	r := runBin(t, map[string]string{"IMPRINT_DATA_DIR": t.TempDir()}, "", "import", "--dry-run", filepath.Dir(sharedFile(t, "claude-code/session_b.jsonl")))
	if r.code != 0 {
		t.Fatalf("dry run: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"dry run: nothing was written. The import would:\n", "  read 4 files holding 4 transcripts\n", "  record 21 messages", "  capture 12 episodes"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, past := range []string{"recorded", "captured into", "stored"} {
		if strings.Contains(r.stdout, past) {
			t.Errorf("dry run says %q (past tense):\n%s", past, r.stdout)
		}
	}
}

// TestUnknownIDExits2 checks that naming a record the scope does not have
// is bad input (exit 2), on the built binary.
func TestUnknownIDExits2(t *testing.T) {
	t.Parallel()
	env := map[string]string{"IMPRINT_DATA_DIR": t.TempDir()}
	for _, args := range [][]string{{"memories", "show", "nope"}, {"keys", "revoke", "nope"}, {"extract", "--session", "nope"}} {
		if r := runBin(t, env, "", args...); r.code != 2 || !strings.Contains(r.stderr, "nope") {
			t.Errorf("imprint %s: exit %d, want 2: %s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}
