package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
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
			if r.code != 0 {
				t.Errorf("exit %d, want 0: %s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "imprint hook: warning: ") || !strings.Contains(lines[0], tc.cause) {
				t.Errorf("stderr %q: want one line \"imprint hook: warning: …%s…\"", r.stderr, tc.cause)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing (Claude Code would add it to the context)", r.stdout)
			}
		})
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
	env := map[string]string{"IMPRINT_SERVER": s.URL, "IMPRINT_DATA_DIR": t.TempDir()}
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
