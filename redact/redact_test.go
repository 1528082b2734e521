package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint/internal/testfiles"
)

// j joins parts. Test secrets are assembled at run time so the repository
// holds no string a secret scanner would flag; they are all fake.
func j(parts ...string) string { return strings.Join(parts, "") }

type secretCase struct {
	name   string
	text   string   // a sentence containing the secret
	secret []string // strings that must not survive
	kind   string
	keep   []string // context that must survive
}

func secretCases() []secretCase {
	openaiLegacy := j("sk-", "Zq8xLm3NvB7cT1kR9wYp", "F4hJ6dS2aG5eQ0uI8oPzXcVb")
	openaiProj := j("sk-", "proj-", "Xy7_kL2mN9-pQ4rS8tU1vW6xY3zA5bC0dE", "fG7hJ2kL9mN4pQ8rS1tU6vW3x")
	anthropic := j("sk-", "ant-", "api03-", "Rt5Yu8Io2Pa6Sd9Fg3Hj7Kl1Zx4Cv0Bn", "Mq2We5Rt8Yu1Io4Pa7Sd0Fg3Hj6Kl9Zx2Cv5Bn8MqAA")
	awsID := j("AKIA", "IOSFODNN7EXAMPLE")
	awsSession := j("ASIA", "Y3NJ4KDPXQ7TLM2B")
	awsSecret := j("wJalrXUtnFEMI", "/K7MDENG/bPxRfiCYEXAMPLEKEY")
	ghp := j("ghp_", "R8tY2uI5oP9aS3dF6gH1jK4lZ7xC0vB2nM5q")
	gho := j("gho_", "16C7e42F292c6912E7710c838347Ae178B4a")
	ghPAT := j("github_", "pat_", "11ABCDEFG0123456789abc_", "defGHIJKLmnopQRSTuvwxYZ0123456789abcdefGHIJKLmnopQRSTuvwx")
	xoxb := j("xox", "b-", "2468013579-1357924680135-", "Zx9Cv8Bn7Mq6We5Rt4Yu3Io2")
	xapp := j("xapp", "-1-", "A02ABCDEF9J-4567890123456-", "0f1e2d3c4b5a69788796a5b4c3d2e1f0")
	webhook := j("https://hooks.slack", ".com/services/", "T024BE7LD/B0A1B2C3D4E/", "Qw3Er5Ty7Ui9Op1As3Df5Gh7")
	jwt := j("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUgRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ", ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
	pemBody := "MIIEowIBAAKCAQEA2a2rwplBQLzHPZe5RJr9vAiYG2rHAqXhBLMnFz0VCc7ezH0+\nb4HnWnQGYpL2mSqUqJg5P8fZ3Xy0y3ZHm2dX5VvO6DRSXH4d1cJQm0r8WmDoRrAA\nLpFhcXvX9rGAhOa3aO9aQ1f1ZfW7dFJqNnUJ0nZQ6kbu0r3KuyJrXJ0yqJ7a1QIDAQAB"
	pem := j("-----BEGIN RSA ", "PRIVATE KEY-----\n", pemBody, "\n-----END RSA ", "PRIVATE KEY-----")
	sshBody := "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDq0nMmJ4oWQ5vY7Yq3XyZ8r2y8d6rR9h2xW1f4z9jK7AAAAJgq1b2Kqd"
	sshCut := j("-----BEGIN OPENSSH ", "PRIVATE KEY-----\n", sshBody)
	bearer := j("ya29", ".a0AfB_byC7kLmN3pQrStUvWxYz0123456789AbCdEf")
	google := j("AIza", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY")
	stripe := j("sk_", "live_", "51H8xYzAbCdEf", "GhIjKlMnOpQr0123")
	stripeRK := j("rk_", "live_", "51H8xYz9QwErTy", "UiOpAsDf4567")
	glpat := j("glpat-", "xY7zK2mN9pQ4rS8tU1vW")
	npm := j("npm_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
	hf := j("hf_", "kLmNoPqRsTuVwXyZ0123456789AbCdEfGh")
	dbPass := "Tr0ub4dor&3x" // '&' ends an unquoted value, so only the part before it goes in a URL
	urlPass := "s3cr3t-P@ssw0rd"
	cases := []secretCase{
		{"openai legacy key", "I set OPENAI_API_KEY=" + openaiLegacy + " in my shell and it worked.", []string{openaiLegacy}, KindOpenAIKey, []string{"OPENAI_API_KEY="}},
		{"openai project key", "Use this key: " + openaiProj + ", it belongs to the staging project.", []string{openaiProj}, KindOpenAIKey, []string{"Use this key: ", ", it belongs"}},
		{"anthropic key", `client = Anthropic(api_key="` + anthropic + `")`, []string{anthropic}, KindAnthropicKey, []string{"client = Anthropic(api_key="}},
		{"aws access key id", "The IAM user has access key " + awsID + " attached.", []string{awsID}, KindAWSAccessKey, []string{"has access key "}},
		{"aws session key id", "export AWS_ACCESS_KEY_ID=" + awsSession, []string{awsSession}, KindAWSAccessKey, []string{"AWS_ACCESS_KEY_ID="}},
		{"aws secret", "[default]\naws_secret_access_key = " + awsSecret + "\nregion = eu-west-1", []string{awsSecret}, KindAWSSecret, []string{"aws_secret_access_key = ", "region = eu-west-1"}},
		{"github classic token", "git clone https://" + ghp + "@github.com/acme/app.git failed", []string{ghp}, KindGitHubToken, []string{"github.com/acme/app.git"}},
		{"github oauth token", "gh auth status shows token " + gho + " for octocat", []string{gho}, KindGitHubToken, []string{"for octocat"}},
		{"github fine-grained pat", "GITHUB_TOKEN: " + ghPAT, []string{ghPAT}, KindGitHubToken, []string{"GITHUB_TOKEN: "}},
		{"slack bot token", "The bot posts with " + xoxb + " into #alerts.", []string{xoxb}, KindSlackToken, []string{"into #alerts."}},
		{"slack app token", "SLACK_APP_TOKEN=" + xapp, []string{xapp}, KindSlackToken, nil},
		{"slack webhook", "Alerts go to " + webhook + " every hour.", []string{webhook, "Qw3Er5Ty7Ui9Op1As3Df5Gh7"}, KindSlackWebhook, []string{"Alerts go to ", " every hour."}},
		{"jwt", "The session cookie was " + jwt + "; it expires tomorrow.", []string{jwt, "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"}, KindJWT, []string{"; it expires tomorrow."}},
		{"pem private key", "Here is the deploy key:\n" + pem + "\nPlease rotate it.", []string{pemBody, "MIIEowIBAAKCAQEA2a2rwplBQLzHPZe5RJr9vAiYG2rHAqXhBLMnFz0VCc7ezH0+"}, KindPrivateKey, []string{"Here is the deploy key:\n", "\nPlease rotate it."}},
		{"pem private key cut short", "cat ~/.ssh/id_ed25519 prints\n" + sshCut, []string{"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"}, KindPrivateKey, []string{"cat ~/.ssh/id_ed25519 prints\n"}},
		{"pem in json string", `{"key": "` + strings.ReplaceAll(pem, "\n", `\n`) + `"}`, []string{"MIIEowIBAAKCAQEA2a2rwplBQLzHPZe5RJr9vAiYG2rHAqXhBLMnFz0VCc7ezH0+"}, KindPrivateKey, []string{`{"key": "`}},
		{"indented encrypted pem", "tls:\n  key: |\n    " + j("-----BEGIN ENCRYPTED ", "PRIVATE KEY-----") + "\n    MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQIq1zX\n    AgIIADAMBggqhkiG9w0CCQUAMBQGCCqGSIb3DQMHBAjL\n    " + j("-----END ENCRYPTED ", "PRIVATE KEY-----") + "\n  cert: server.crt", []string{"MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQIq1zX", "AgIIADAMBggqhkiG9w0CCQUAMBQGCCqGSIb3DQMHBAjL"}, KindPrivateKey, []string{"tls:\n  key: |\n    ", "\n  cert: server.crt"}},
		{"bearer header", "curl -H 'Authorization: Bearer " + bearer + "' https://api.example.com/v1/me", []string{bearer}, KindBearer, []string{"Authorization: Bearer ", "https://api.example.com/v1/me"}},
		{"basic auth header", "Authorization: Basic " + j("YWxhZGRpbjpv", "cGVuc2VzYW1l"), []string{j("YWxhZGRpbjpv", "cGVuc2VzYW1l")}, KindBasicAuth, []string{"Authorization: Basic "}},
		{"url password", "DATABASE_URL=postgres://app_user:" + urlPass + "@db.internal:5432/prod", []string{urlPass, "P@ssw0rd"}, KindURLPassword, []string{"postgres://app_user:", "@db.internal:5432/prod"}},
		{"google api key", "maps.googleapis.com/maps/api/js?key=" + google + "&callback=init", []string{google}, KindGoogleAPIKey, []string{"&callback=init"}},
		{"stripe secret key", "Stripe.api_key = '" + stripe + "'", []string{stripe}, KindStripeKey, []string{"Stripe.api_key = '"}},
		{"stripe restricted key", "the webhook uses " + stripeRK, []string{stripeRK}, KindStripeKey, nil},
		{"gitlab token", "PRIVATE-TOKEN: " + glpat, []string{glpat}, KindGitLabToken, nil},
		{"npm token", "//registry.npmjs.org/:_authToken=" + npm, []string{npm}, KindNPMToken, []string{"//registry.npmjs.org/:_authToken="}},
		{"huggingface token", "huggingface-cli login --token " + hf, []string{hf}, KindHFToken, []string{"huggingface-cli login --token "}},
		{"password assignment", "mysql -u root --password=" + dbPass + " -h localhost", []string{"Tr0ub4dor"}, KindPassword, []string{"--password=", " -h localhost"}},
		{"json password", `{"username": "alice", "password": "` + j("c0rrect-H0rse", "-battery") + `"}`, []string{j("c0rrect-H0rse", "-battery")}, KindPassword, []string{`"username": "alice"`, `"password": "`}},
		{"yaml client secret", "oauth:\n  client_id: my-app\n  client_secret: " + j("9f8e7d6c5b4a", "39281706f5e4d3c2") + "\n", []string{j("9f8e7d6c5b4a", "39281706f5e4d3c2")}, KindGenericSecret, []string{"client_id: my-app", "client_secret: "}},
		{"token assignment", "set SESSION_TOKEN=" + j("f3a9c1e7", "b2d4068a5c7e9f1b") + " before running", []string{j("f3a9c1e7", "b2d4068a5c7e9f1b")}, KindGenericSecret, []string{"SESSION_TOKEN=", " before running"}},
		{"escaped json api key", `{\"api_key\": \"` + j("AbCd3fGh1j", "KlMn0pQrSt") + `\"}`, []string{j("AbCd3fGh1j", "KlMn0pQrSt")}, KindGenericSecret, []string{`{\"api_key\": \"`}},
	}
	return append(cases, moreSecretCases()...)
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
