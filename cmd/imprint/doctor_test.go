package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint/internal/pgtest"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// result is what one in-process run of imprint produced.
type result struct {
	code           int
	stdout, stderr string
}

// runImprint runs imprint in-process with env as its whole environment
// (HOME points at a temp dir unless env sets it).
func runImprint(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["HOME"]; !ok {
		env["HOME"] = t.TempDir()
	}
	var stdout, stderr bytes.Buffer
	code := runEnv(context.Background(), args, envMap(env), strings.NewReader(""), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// checks decodes doctor's JSON lines into check -> status.
func checks(t *testing.T, r result) (map[string]string, map[string]checkResult) {
	t.Helper()
	status := map[string]string{}
	full := map[string]checkResult{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var c checkResult
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("doctor line %q is not JSON: %v\nstderr: %s", line, err, r.stderr)
		}
		status[c.Check] = c.Status
		full[c.Check] = c
	}
	return status, full
}

// jsonError decodes the {"error": {...}} object printed on stderr.
func jsonError(t *testing.T, stderr string) (code, message string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stderr)), &e); err != nil {
		t.Fatalf("stderr %q is not one JSON error object: %v", stderr, err)
	}
	return e.Error.Code, e.Error.Message
}

func TestDoctorFreshDataDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new", "data")
	r := runImprint(t, nil, "doctor", "--json", "--data-dir", dir)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	status, full := checks(t, r)
	want := map[string]string{"config": "ok", "store": "ok", "llm": "skip", "embedding": "ok"}
	if diff := cmp.Diff(want, status); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "imprint.db")); err != nil {
		t.Errorf("store not created in the data dir: %v", err)
	}
	if got := full["config"].Config["data_dir"]; got != dir {
		t.Errorf("config data_dir = %q, want %q", got, dir)
	}
	if !strings.Contains(full["embedding"].Detail, "hash/384") {
		t.Errorf("embedding detail %q does not name the embedder", full["embedding"].Detail)
	}
}

func TestDoctorHumanOutput(t *testing.T) {
	t.Parallel()
	r := runImprint(t, map[string]string{"IMPRINT_EMBEDDING_PROVIDER": "none"}, "doctor", "--data-dir", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	// The four checks come first, aligned: the status always starts at the same column.
	col := -1
	for i, name := range []string{"config", "store", "llm", "embedding"} {
		f := strings.Fields(lines[i])
		if len(f) < 2 || f[0] != name {
			t.Fatalf("line %d = %q, want the %s check", i, lines[i], name)
		}
		c := strings.Index(lines[i], " "+f[1]+" ") + 1
		if col >= 0 && c != col {
			t.Errorf("status of %s at column %d, others at %d:\n%s", name, c, col, r.stdout)
		}
		col = c
	}
	if !strings.Contains(lines[3], "skip") {
		t.Errorf("embedding none is not skipped: %q", lines[3])
	}
	if !strings.Contains(r.stdout, "capture.batch_mode") || !strings.Contains(r.stdout, "env IMPRINT_EMBEDDING_PROVIDER") {
		t.Errorf("human output lacks the configuration in effect and its sources:\n%s", r.stdout)
	}
}

func TestDoctorBrokenConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		want string
	}{
		{name: "bad enum", yaml: "capture:\n  batch_mode: sometimes\n", want: "capture.batch_mode"},
		{name: "unknown key", yaml: "extraction:\n  every_rounds: 3\n", want: "extraction.every_rounds"},
		{name: "bad env int", env: map[string]string{"IMPRINT_LLM_CONCURRENCY": "0"}, want: "llm.concurrency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.yaml != "" {
				writeFile(t, dir, "imprint.yaml", tt.yaml)
			}
			r := runImprint(t, tt.env, "doctor", "--json", "--data-dir", dir)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2; stderr %s", r.code, r.stderr)
			}
			code, msg := jsonError(t, r.stderr)
			if code != "invalid" || !strings.Contains(msg, tt.want) {
				t.Errorf("error = %s %q, want invalid naming %s", code, msg, tt.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
}

func TestDoctorLLM(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reply  llmtest.Reply
		code   int
		status string
	}{
		{"reachable", llmtest.Reply{Text: "pong"}, 0, "ok"},
		{"failing", llmtest.Fault500(), 1, "fail"},
		{"rejected key", llmtest.Status(401), 1, "fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Script(doctorPingOp, tt.reply)
			env := map[string]string{
				"IMPRINT_LLM_PROVIDER":    "openai",
				"IMPRINT_LLM_BASE_URL":    srv.URL,
				"IMPRINT_LLM_MODEL":       "x",
				"IMPRINT_LLM_MAX_RETRIES": "0",
				"IMPRINT_LLM_API_KEY":     "sk-test-secret-value-9876",
			}
			dir := t.TempDir()
			r := runImprint(t, env, "doctor", "--json", "--data-dir", dir)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", r.code, tt.code, r.stderr)
			}
			status, full := checks(t, r)
			if status["llm"] != tt.status {
				t.Errorf("llm check = %s (%s), want %s", status["llm"], full["llm"].Detail, tt.status)
			}
			if status["store"] != "ok" || status["embedding"] != "ok" {
				t.Errorf("other checks = %v, want ok", status)
			}
			reqs := srv.RequestsFor(doctorPingOp)
			if len(reqs) != 1 || reqs[0].Model != "x" {
				t.Errorf("provider got %d %s requests (%+v), want exactly one for model x", len(reqs), doctorPingOp, reqs)
			}
			if tt.code != 0 {
				if code, msg := jsonError(t, r.stderr); code == "" || !strings.Contains(msg, "llm") {
					t.Errorf("error = %s %q, want one naming the failed llm check", code, msg)
				}
			}
		})
	}
}

func TestDoctorMasksSecrets(t *testing.T) {
	t.Parallel()
	const key, token = "sk-live-abcdefghijklmnop-7777", "tok-abcdefghijklmnop-5555"
	srv := llmtest.NewServer(t)
	srv.Script(doctorPingOp, llmtest.Text("pong"))
	env := map[string]string{
		"IMPRINT_LLM_PROVIDER":     "anthropic",
		"IMPRINT_LLM_MODEL":        "claude-x",
		"IMPRINT_LLM_BASE_URL":     srv.URL,
		"ANTHROPIC_API_KEY":        key,
		"IMPRINT_SERVER_API_TOKEN": token,
	}
	for _, args := range [][]string{{"doctor", "--json"}, {"doctor"}} {
		r := runImprint(t, env, append(args, "--data-dir", t.TempDir())...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d, stderr %s", args, r.code, r.stderr)
		}
		out := r.stdout + r.stderr
		for _, secret := range []string{key, token, "abcdefghijklmnop"} {
			if strings.Contains(out, secret) {
				t.Errorf("%v output shows a secret %q:\n%s", args, secret, out)
			}
		}
		for _, masked := range []string{"****7777", "****5555"} {
			if !strings.Contains(out, masked) {
				t.Errorf("%v output lacks the masked form %s:\n%s", args, masked, out)
			}
		}
	}
	if got := srv.RequestsFor(doctorPingOp); len(got) != 2 || got[0].Header.Get("X-Api-Key") != key {
		t.Errorf("anthropic requests = %d, want 2 sent with the key from ANTHROPIC_API_KEY", len(got))
	}
}

// TestDoctorPostgres checks doctor on a real PostgreSQL: the store is
// named without its password, reachable and migrated, and the vector tier
// in use is said.
func TestDoctorPostgres(t *testing.T) {
	u := pgtest.Schema(t)
	t.Parallel()
	r := runImprint(t, map[string]string{"IMPRINT_STORE": u}, "doctor", "--json", "--data-dir", t.TempDir())
	status, full := checks(t, r)
	if status["store"] != "ok" || !strings.Contains(full["store"].Detail, "postgres ") ||
		!strings.Contains(full["store"].Detail, "vectors: ") {
		t.Errorf("store check = %+v, want ok naming postgres and its vector search", full["store"])
	}
}

func TestDoctorPostgresUnreachable(t *testing.T) {
	t.Parallel()
	r := runImprint(t, map[string]string{"IMPRINT_STORE": "postgres://u:pw@127.0.0.1:1/db?connect_timeout=2"}, "doctor", "--json", "--data-dir", t.TempDir())
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", r.code, r.stderr)
	}
	status, full := checks(t, r)
	if status["store"] != "fail" || !strings.Contains(full["store"].Detail, "unavailable") {
		t.Errorf("store check = %+v, want fail saying the database is unavailable", full["store"])
	}
	if strings.Contains(r.stdout, "pw@") {
		t.Errorf("the store URL's password is shown:\n%s", r.stdout)
	}
}

func TestScopeFlagsAndEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"IMPRINT_TENANT": "acme", "IMPRINT_USER": "ann"}
	r := runImprint(t, env, "doctor", "--json", "--data-dir", t.TempDir(), "--user", "bob")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	_, full := checks(t, r)
	if d := full["config"].Detail; !strings.Contains(d, "scope acme/bob/default") {
		t.Errorf("config detail %q, want scope acme/bob/default (flag > env > default)", d)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{"unknown command", []string{"frobnicate", "--json"}},
		{"unknown flag", []string{"doctor", "--json", "--frob"}},
		{"extra argument", []string{"doctor", "--json", "extra"}},
		{"bad log level", []string{"doctor", "--json", "--log-level", "loud"}},
		{"empty tenant", []string{"doctor", "--json", "--tenant", " "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runImprint(t, nil, append(tt.args, "--data-dir", t.TempDir())...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2; stderr %s", r.code, r.stderr)
			}
			if code, msg := jsonError(t, r.stderr); code != "invalid" || msg == "" {
				t.Errorf("error = %s %q, want invalid with a message", code, msg)
			}
		})
	}
}
