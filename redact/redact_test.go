package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/redact/redacttest"
)

type secretCase struct {
	name   string
	text   string   // a sentence containing the secret
	secret []string // strings that must not survive
	kind   string
	keep   []string // context that must survive
}

// secretCases are the shapes of redacttest.Cases.
func secretCases() []secretCase {
	var out []secretCase
	for _, c := range redacttest.Cases() {
		out = append(out, secretCase{c.Name, c.Text, c.Secrets, c.Kind, c.Keep})
	}
	return out
}

func TestStringRedactsSecrets(t *testing.T) {
	t.Parallel()
	cases := secretCases()
	if len(cases) < 20 {
		t.Fatalf("corpus has %d secret shapes, want at least 20", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, n := Count(tc.text)
			for _, s := range tc.secret {
				if strings.Contains(got, s) {
					t.Errorf("secret %q survived:\n%s", s, got)
				}
			}
			if marker := "[REDACTED:" + tc.kind + "]"; !strings.Contains(got, marker) {
				t.Errorf("want marker %s in:\n%s", marker, got)
			}
			for _, k := range tc.keep {
				if !strings.Contains(got, k) {
					t.Errorf("context %q was lost:\n%s", k, got)
				}
			}
			if n < 1 {
				t.Errorf("Count = %d, want >= 1", n)
			}
			if again := String(got); again != got {
				t.Errorf("not idempotent:\n%s\n%s", got, again)
			}
		})
	}
}

func TestCountAllSecretsInOneText(t *testing.T) {
	t.Parallel()
	var parts []string
	for _, tc := range secretCases() {
		parts = append(parts, tc.text)
	}
	text := strings.Join(parts, "\n\n")
	got, n := Count(text)
	for _, tc := range secretCases() {
		for _, s := range tc.secret {
			if strings.Contains(got, s) {
				t.Errorf("%s: secret %q survived in the combined text", tc.name, s)
			}
		}
	}
	if want := strings.Count(got, markerPrefix); n != want {
		t.Errorf("Count = %d, but the output has %d markers", n, want)
	}
	if n < len(secretCases()) {
		t.Errorf("Count = %d, want at least %d", n, len(secretCases()))
	}
}

func TestStringLeavesOrdinaryTextAlone(t *testing.T) {
	t.Parallel()
	texts := []string{
		"",
		"ok",
		"commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 fixed the race in the scheduler",
		"$ git log --oneline\n3f2a9c1 fix flaky test\n9b8e7d6 add FTS trigram index\n0c1d2e3 Merge branch 'main'",
		"request id 123e4567-e89b-12d3-a456-426614174000 failed with 502",
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"digest e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  imprint-linux-amd64.tar.gz",
		"See https://example.com:8443/docs/auth?lang=en#tokens and http://localhost:8420/v1/memories",
		"ssh git@github.com:acme/imprint.git and https://user@example.com/path",
		"the password policy requires 12 characters",
		"Reset your password: open Settings, then Security.",
		"CREATE VIRTUAL TABLE t USING fts5(body, tokenize=trigram); tokenizer=trigram",
		"max_tokens=4096 and token_count=1234 with the secret_santa list",
		"The API key field is optional; set api_key=$OPENAI_API_KEY or use --api-key-file ~/.config/key",
		"password=${DB_PASSWORD} is read from the environment",
		"Bearer tokens are described in RFC 6750; a bearer token is sent in a header.",
		"risk-assessment-methodology-document-template for the task-management service",
		"The sky-blue paint and the desk-organizer-with-drawers arrived.",
		"base64 of hello is aGVsbG8= and of world is d29ybGQ=",
		"I moved to Beijing last May; 我住在北京，喜欢喝咖啡。",
		"AKIA is the prefix of AWS access key ids; ASIA marks temporary ones.",
		"The function getAccessKeyId() returns the id; privateKeyPath = ./keys/dev.pem",
		"Our hf_transfer setting and npm_config_cache directory are both set.",
		"eyJ is how base64 JSON starts, e.g. eyJhbGciOi...",
		"export PATH=/usr/local/go/bin:$PATH",
	}
	for _, s := range texts {
		if got, n := Count(s); got != s || n != 0 {
			t.Errorf("Count(%q) = %q, %d; want it unchanged", s, got, n)
		}
	}
}

// TestStringLeavesRealTranscriptsAlone runs the redactor over real
// conversations and agent trajectories, which contain no secrets.
func TestStringLeavesRealTranscriptsAlone(t *testing.T) {
	t.Parallel()
	texts := sharedTexts(t)
	changed := 0
	for _, s := range texts {
		if got := String(s); got != s {
			changed++
			if changed <= 5 {
				t.Errorf("real text changed:\n%s\n---\n%s", s, got)
			}
		}
	}
	if changed > 0 {
		t.Errorf("%d of %d real texts changed", changed, len(texts))
	}
}

// sharedTexts returns every string value in the shared LoCoMo and τ-bench
// test data.
func sharedTexts(t testing.TB) []string {
	t.Helper()
	dir := sharedTestdata(t)
	var out []string
	for _, name := range []string{"locomo/locomo-2conv.json", "tau-bench/airline-40.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("read shared test data: %v", err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("decode %s: %v", name, err)
		}
		out = collectStrings(v, out)
	}
	lines, err := filepath.Glob(filepath.Join(dir, "claude-code", "*.jsonl"))
	if err != nil || len(lines) == 0 {
		t.Fatalf("no Claude Code transcripts in %s: %v", dir, err)
	}
	for _, name := range lines {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("read shared test data: %v", err)
		}
		out = append(out, strings.Split(string(b), "\n")...)
	}
	if len(out) < 1000 {
		t.Fatalf("shared test data gave only %d strings", len(out))
	}
	return out
}

func collectStrings(v any, out []string) []string {
	switch v := v.(type) {
	case string:
		return append(out, v)
	case []any:
		for _, e := range v {
			out = collectStrings(e, out)
		}
	case map[string]any:
		for _, e := range v {
			out = collectStrings(e, out)
		}
	}
	return out
}

// sharedTestdata returns the repository's testdata folder.
func sharedTestdata(t testing.TB) string { return testfiles.Dir() }

func TestAnchorsFitTheScanTables(t *testing.T) {
	t.Parallel()
	if len(needles) > 64 {
		t.Fatalf("%d anchors; the scan tables hold 64", len(needles))
	}
	for _, n := range needles {
		if n.text == "" && n.shape == (shape{}) {
			t.Errorf("a needle has neither text nor shape")
		}
		if n.text != "" && len(n.text) < 3 {
			t.Errorf("anchor %q is shorter than 3 bytes", n.text)
		}
	}
}
