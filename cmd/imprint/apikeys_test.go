package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint"
)

// keyLine is what keys create prints with --json.
type keyLine struct {
	ID        string           `json:"id"`
	Token     string           `json:"token"`
	Name      string           `json:"name"`
	Scope     imprint.KeyScope `json:"scope"`
	ReadOnly  bool             `json:"read_only"`
	CreatedAt string           `json:"created_at"`
}

func TestKeysCreateListRevoke(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// IMPRINT_USER must not narrow a key: only the flags do.
	env := map[string]string{"IMPRINT_USER": "someone"}
	r := runImprint(t, env, "keys", "create", "--json", "--data-dir", dir, "--tenant", "acme", "--agent", "claude", "--name", "ci")
	if r.code != 0 {
		t.Fatalf("keys create: exit %d: %s", r.code, r.stderr)
	}
	var k keyLine
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &k); err != nil {
		t.Fatalf("keys create --json: %v\n%s", err, r.stdout)
	}
	if k.ID == "" || !strings.HasPrefix(k.Token, imprint.APIKeyPrefix) || len(k.Token) < 40 || k.Name != "ci" ||
		k.Scope != (imprint.KeyScope{Tenant: "acme", Agent: "claude"}) || k.ReadOnly || k.CreatedAt == "" {
		t.Errorf("created key = %+v", k)
	}
	var raw map[string]any
	_ = json.Unmarshal([]byte(r.stdout), &raw)
	for _, f := range []string{"id", "token", "name", "scope", "read_only", "created_at"} {
		if _, ok := raw[f]; !ok {
			t.Errorf("keys create --json lacks %q: %s", f, r.stdout)
		}
	}

	ro := runImprint(t, nil, "keys", "create", "--data-dir", dir, "--tenant", "beta", "--read-only")
	if ro.code != 0 || !strings.Contains(ro.stdout, "beta/*/*") || !strings.Contains(ro.stdout, "read-only") || !strings.Contains(ro.stdout, imprint.APIKeyPrefix) {
		t.Errorf("keys create (text): exit %d\n%s%s", ro.code, ro.stdout, ro.stderr)
	}

	list := runImprint(t, nil, "keys", "list", "--data-dir", dir)
	if list.code != 0 || strings.Count(list.stdout, "\n") != 2 || !strings.Contains(list.stdout, k.ID) || !strings.Contains(list.stdout, "acme/*/claude") {
		t.Errorf("keys list: exit %d\n%s%s", list.code, list.stdout, list.stderr)
	}
	if strings.Contains(list.stdout, imprint.APIKeyPrefix) {
		t.Errorf("keys list shows a token:\n%s", list.stdout)
	}
	// The token is nowhere in the store: only its hash is.
	for _, name := range []string{"imprint.db", "imprint.db-wal"} {
		if data, _ := os.ReadFile(filepath.Join(dir, name)); strings.Contains(string(data), k.Token) {
			t.Errorf("%s holds the token", name)
		}
	}

	rev := runImprint(t, nil, "keys", "revoke", "--json", "--data-dir", dir, k.ID)
	if rev.code != 0 || !strings.Contains(rev.stdout, `"revoked_at"`) {
		t.Errorf("keys revoke: exit %d\n%s%s", rev.code, rev.stdout, rev.stderr)
	}
	if r := runImprint(t, nil, "keys", "revoke", "--data-dir", dir, "key_nope"); r.code != 2 || !strings.Contains(r.stderr, "not found") { // bad input (issue 13)
		t.Errorf("keys revoke of an unknown id: exit %d %s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"keys", "create"}, {"keys", "create", "--tenant", "acme", "--user", " "}, {"keys", "revoke"}} {
		if r := runImprint(t, nil, append(args, "--data-dir", dir)...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.stderr)
		}
	}
}

// A key made with imprint keys opens imprint serve to its scope only, and
// lets the service listen beyond loopback without the admin token.
func TestServeWithAPIKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mk := func(args ...string) keyLine {
		r := runImprint(t, nil, append([]string{"keys", "create", "--json", "--data-dir", dir}, args...)...)
		var k keyLine
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &k) != nil {
			t.Fatalf("keys create %v: exit %d %s%s", args, r.code, r.stdout, r.stderr)
		}
		return k
	}
	acme := mk("--tenant", "acme")
	reader := mk("--tenant", "acme", "--read-only")
	s := startInProc(t, dir, map[string]string{"IMPRINT_SERVER_ADDR": "0.0.0.0:0"})
	// Reach it on loopback: the Host must be one it serves.
	s.URL = "http://127.0.0.1:" + s.URL[strings.LastIndex(s.URL, ":")+1:]
	conv := repoFile(t, "examples/conversation.json")
	if r := runImprint(t, nil, "record", "--json", "--server", s.URL, conv); r.code == 0 {
		t.Errorf("record without a key succeeded")
	}
	if r := runImprint(t, map[string]string{"IMPRINT_API_TOKEN": reader.Token}, "record", "--json", "--server", s.URL, conv); r.code == 0 ||
		!strings.Contains(r.stderr, "forbidden") {
		t.Errorf("record with a read-only key: exit %d %s", r.code, r.stderr)
	}
	if r := runImprint(t, map[string]string{"IMPRINT_API_TOKEN": acme.Token}, "record", "--json", "--tenant", "other", "--server", s.URL, conv); r.code == 0 ||
		!strings.Contains(r.stderr, "forbidden") {
		t.Errorf("record into another tenant: exit %d %s", r.code, r.stderr)
	}
	if r := runImprint(t, map[string]string{"IMPRINT_API_TOKEN": acme.Token}, "record", "--json", "--tenant", "acme", "--server", s.URL, conv); r.code != 0 {
		t.Fatalf("record with the tenant's key: exit %d %s", r.code, r.stderr)
	}
	req, _ := http.NewRequest("GET", s.URL+"/v1/status?tenant=acme", nil)
	req.Header.Set("Authorization", "Bearer "+reader.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var st serveStatus
	_ = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || st.PendingMessages == 0 {
		t.Errorf("status with the read-only key = %d, pending %d; want the recorded messages", resp.StatusCode, st.PendingMessages)
	}
}
