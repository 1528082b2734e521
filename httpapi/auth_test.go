package httpapi

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// keyEnv is a server with the admin token and four keys: ana's (every
// agent of user ana of tenant acme), a read-only one of all of acme, a
// revoked one, and one of tenant beta.
type keyEnv struct {
	*env
	ana, reader, revoked, beta string
}

var scopeBeta = imprint.Scope{Tenant: "beta", User: "ana", Agent: "coder"}

func newKeyEnv(t *testing.T, cfg Config) *keyEnv {
	t.Helper()
	e := &keyEnv{env: newEnv(t, cfg)}
	ctx := context.Background()
	mk := func(id string, ks imprint.KeyScope, ro bool) string {
		tok := imprint.NewAPIKeyToken()
		if err := e.db.CreateAPIKey(ctx, imprint.APIKey{ID: id, Scope: ks, ReadOnly: ro}, imprint.HashAPIKeyToken(tok)); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	e.ana = mk("key_ana", imprint.KeyScope{Tenant: "acme", User: "ana"}, false)
	e.reader = mk("key_reader", imprint.KeyScope{Tenant: "acme"}, true)
	e.revoked = mk("key_revoked", imprint.KeyScope{Tenant: "acme"}, false)
	e.beta = mk("key_beta", imprint.KeyScope{Tenant: "beta"}, false)
	if _, err := e.db.RevokeAPIKey(ctx, "key_revoked", imprint.Now()); err != nil {
		t.Fatal(err)
	}
	// Records of ana (scope A), of bob (scope B, same tenant) and of
	// tenant beta, with the same kinds of ids.
	for _, sc := range []struct {
		scope imprint.Scope
		tag   string
	}{{scopeA, "a"}, {scopeB, "b"}, {scopeBeta, "beta"}} {
		e.saveCapture(sc.scope, "ep-"+sc.tag, "s-"+sc.tag, imprint.Trace{ID: "t-" + sc.tag, StepKey: "0", UserText: "deploy notes of " + sc.tag})
		e.putMemory(imprint.Memory{ID: "m-" + sc.tag, Scope: sc.scope, Type: imprint.MemoryPersona, Content: "deploys on friday " + sc.tag})
	}
	return e
}

// route is one request to every endpoint of the API, in ana's scope (the
// scope is left to the key, or named with scopeA's query).
type route struct {
	pattern, method, path, body string
}

func allRoutes() []route {
	return []route{
		{"POST /v1/messages", "POST", "/v1/messages", `{"session_id":"s-new","messages":[{"role":"user","content":"we ship on mondays"}]}`},
		{"POST /v1/episodes", "POST", "/v1/episodes", `{"session_id":"s-new","turns":[{"role":"user","content":"ship it"}]}`},
		{"POST /v1/sessions/{id}/turns", "POST", "/v1/sessions/s-new/turns", `{"turns":[{"role":"user","content":"hello"}]}`},
		{"POST /v1/sessions/{id}/finalize", "POST", "/v1/sessions/s-new/finalize", `{}`},
		{"POST /v1/sessions/{id}/end", "POST", "/v1/sessions/s-new/end", ""},
		{"POST /v1/sessions/{id}/extract", "POST", "/v1/sessions/s-a/extract", ""},
		{"GET /v1/episodes/{id}", "GET", "/v1/episodes/ep-a", ""},
		{"GET /v1/episodes/{id}/traces", "GET", "/v1/episodes/ep-a/traces", ""},
		{"GET /v1/traces", "GET", "/v1/traces", ""},
		{"GET /v1/traces/{id}", "GET", "/v1/traces/t-a", ""},
		{"GET /v1/memories", "GET", "/v1/memories", ""},
		{"GET /v1/memories/{id}", "GET", "/v1/memories/m-a", ""},
		{"POST /v1/memories", "POST", "/v1/memories", `{"content":"ana ships on tuesdays"}`},
		{"POST /v1/memories/forget", "POST", "/v1/memories/forget", `{"session_id":"s-a"}`},
		{"PATCH /v1/memories/{id}", "PATCH", "/v1/memories/m-a", `{"content":"deploys on thursday a"}`},
		{"DELETE /v1/memories/{id}", "DELETE", "/v1/memories/m-a", ""},
		{"GET /v1/search", "GET", "/v1/search?q=deploys", ""},
		{"GET /v1/recall", "GET", "/v1/recall?q=deploys", ""},
		{"GET /v1/status", "GET", "/v1/status", ""},
		{"GET /v1/events", "GET", "/v1/events", ""},
		{"GET /healthz", "GET", "/healthz", ""},
		{"GET /metrics", "GET", "/metrics", ""},
		{"GET /{$}", "GET", "/", ""},
	}
}

// withQuery adds a query to a route's path.
func (r route) withQuery(q string) string {
	if strings.Contains(r.path, "?") {
		return r.path + "&" + q
	}
	return r.path + "?" + q
}

// send makes the request with token; the event stream is cut once its
// headers arrived.
func (e *keyEnv) send(method, path, body, token string) reply {
	e.t.Helper()
	var h []string
	if token != "" {
		h = []string{"Authorization", "Bearer " + token}
	}
	if path == "/v1/events" || strings.HasPrefix(path, "/v1/events?") {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, method, e.ts.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := e.ts.Client().Do(req)
		if err != nil {
			e.t.Fatal(err)
		}
		defer resp.Body.Close()
		var body []byte
		if resp.StatusCode != http.StatusOK {
			body = make([]byte, 4096)
			n, _ := resp.Body.Read(body)
			body = body[:n]
		}
		return reply{status: resp.StatusCode, header: resp.Header, body: body}
	}
	var b any
	if body != "" {
		b = body
	}
	return e.do(method, path, b, h...)
}

func TestRoutesAllCovered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	var covered []string
	for _, r := range allRoutes() {
		covered = append(covered, r.pattern)
	}
	for _, p := range e.srv.patterns {
		if !slices.Contains(covered, p) {
			t.Errorf("route %q is not in allRoutes: the key tests do not check it", p)
		}
	}
}

func TestAPIKeysOnEveryRoute(t *testing.T) {
	t.Parallel()
	e := newKeyEnv(t, Config{Token: testToken})
	before := e.counts()
	for _, r := range allRoutes() {
		open := r.pattern == "GET /healthz"
		write := r.method != "GET"

		// Revoked: nothing opens, with a message saying why.
		got := e.send(r.method, r.path, r.body, e.revoked)
		if open {
			if got.status != http.StatusOK {
				t.Errorf("revoked key: %s = %d, want 200 (/healthz needs no key)", r.pattern, got.status)
			}
		} else if got.status != http.StatusUnauthorized {
			t.Errorf("revoked key: %s = %d %s, want 401", r.pattern, got.status, got.body)
		} else if code, msg := got.errCode(t); code != CodeUnauthorized || !strings.Contains(msg, "revoked") {
			t.Errorf("revoked key: %s = %s %q, want unauthorized naming the revocation", r.pattern, code, msg)
		}

		// Read-only: every write is forbidden; reads are answered.
		got = e.send(r.method, r.path, r.body, e.reader)
		switch {
		case write && got.status != http.StatusForbidden:
			t.Errorf("read-only key: %s = %d %s, want 403", r.pattern, got.status, got.body)
		case write:
			if code, _ := got.errCode(t); code != CodeForbidden {
				t.Errorf("read-only key: %s code %q, want forbidden", r.pattern, code)
			}
		case r.pattern == "GET /metrics":
			if got.status != http.StatusForbidden {
				t.Errorf("read-only key: /metrics = %d, want 403 (it sums every tenant)", got.status)
			}
		case got.status == http.StatusUnauthorized || got.status == http.StatusForbidden:
			t.Errorf("read-only key: %s = %d %s, want it read", r.pattern, got.status, got.body)
		}

		// A scope outside the key: another tenant, or another user of
		// the key's tenant. Named in the query or, for a body, in its
		// scope object.
		if !open {
			for _, q := range []string{"tenant=beta", "user=bob"} {
				got = e.send(r.method, r.withQuery(q), r.body, e.ana)
				if got.status != http.StatusForbidden {
					t.Errorf("ana's key, %s: %s = %d %s, want 403", q, r.pattern, got.status, got.body)
				} else if code, _ := got.errCode(t); code != CodeForbidden {
					t.Errorf("ana's key, %s: %s code %q", q, r.pattern, code)
				}
			}
			if write && r.body != "" && r.body != "{}" {
				body := strings.Replace(r.body, "{", `{"scope":{"tenant":"acme","user":"bob","agent":"coder"},`, 1)
				if got = e.send(r.method, r.path, body, e.ana); got.status != http.StatusForbidden {
					t.Errorf("ana's key, bob's scope in the body: %s = %d %s, want 403", r.pattern, got.status, got.body)
				}
			}
		}
	}
	e.unchanged(before, "revoked, read-only and out-of-scope requests")
}

func TestAPIKeyScopeDefaultsAndIDs(t *testing.T) {
	t.Parallel()
	e := newKeyEnv(t, Config{Token: testToken})
	// ana's key leaves the agent open: the request names it, the user
	// and tenant come from the key.
	got := e.send("GET", "/v1/memories/m-a?agent=coder", "", e.ana)
	if got.status != http.StatusOK || !strings.Contains(string(got.body), "deploys on friday a") {
		t.Fatalf("ana's memory with ana's key = %d %s", got.status, got.body)
	}
	// Ids of another scope reveal nothing: 404, as for an id that does not exist.
	for _, path := range []string{"/v1/memories/m-beta?agent=coder", "/v1/memories/m-b?agent=coder", "/v1/episodes/ep-beta?agent=coder",
		"/v1/traces/t-b?agent=coder", "/v1/episodes/ep-b/traces?agent=coder"} {
		if got := e.send("GET", path, "", e.ana); got.status != http.StatusNotFound {
			t.Errorf("ana's key: GET %s = %d %s, want 404", path, got.status, got.body)
		}
	}
	got = e.send("GET", "/v1/memories?agent=coder", "", e.ana)
	if s := string(got.body); got.status != http.StatusOK || !strings.Contains(s, "friday a") || strings.Contains(s, "friday b") || strings.Contains(s, "friday beta") {
		t.Errorf("ana's memories = %d %s, want only ana's", got.status, got.body)
	}
	got = e.send("GET", "/v1/search?q=deploys+friday&agent=coder", "", e.beta)
	if s := string(got.body); got.status != http.StatusOK || strings.Contains(s, "m-a") || strings.Contains(s, "m-b") {
		t.Errorf("beta's search = %d %s, want nothing of acme", got.status, got.body)
	}
	// A write lands in the key's scope.
	got = e.send("POST", "/v1/messages", `{"session_id":"s-k","messages":[{"role":"user","content":"we ship on mondays"}]}`, e.ana)
	if got.status != http.StatusOK {
		t.Fatalf("ana's key records = %d %s", got.status, got.body)
	}
	want := imprint.Scope{Tenant: "acme", User: "ana", Agent: imprint.DefaultScopePart}
	n, err := e.db.CountPending(context.Background(), want, "s-k")
	if err != nil || n != 1 {
		t.Errorf("messages of %s = %d, %v; want the one recorded with ana's key", want, n, err)
	}
	// The server's LLM sums (every tenant's) are the admin's only.
	_ = e.calls.RecordLLMCall(context.Background(), imprint.LLMCall{Op: "extract.l1.v1", PromptTokens: 900, Outcome: "ok"})
	got = e.send("GET", "/v1/status?agent=coder", "", e.ana)
	if got.status != http.StatusOK || strings.Contains(string(got.body), "extract.l1.v1") {
		t.Errorf("status with ana's key = %d %s, want no server-wide LLM sums", got.status, got.body)
	}
	if got = e.send("GET", "/v1/status", "", testToken); !strings.Contains(string(got.body), "extract.l1.v1") {
		t.Errorf("status with the admin token = %s, want the LLM sums", got.body)
	}
	// The scheme is case-insensitive.
	got = e.do("GET", "/v1/status?agent=coder", nil, "Authorization", "bearer "+e.ana)
	if got.status != http.StatusOK {
		t.Errorf(`"bearer" in lower case = %d %s`, got.status, got.body)
	}
	got = e.do("GET", "/metrics", nil, "Authorization", "BEARER "+testToken)
	if got.status != http.StatusOK {
		t.Errorf("admin token reads /metrics = %d %s", got.status, got.body)
	}
}

// Once a key exists the service is closed, even without an admin token:
// a request without a key is 401, and revoking every key keeps it closed.
func TestAPIKeysCloseAnOpenService(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	if got := e.do("GET", "/v1/status", nil); got.status != http.StatusOK {
		t.Fatalf("open service = %d", got.status)
	}
	ctx := context.Background()
	tok := imprint.NewAPIKeyToken()
	if err := e.db.CreateAPIKey(ctx, imprint.APIKey{ID: "key_1", Scope: imprint.KeyScope{Tenant: "default"}}, imprint.HashAPIKeyToken(tok)); err != nil {
		t.Fatal(err)
	}
	if got := e.do("GET", "/v1/status", nil); got.status != http.StatusUnauthorized {
		t.Errorf("no key once a key exists = %d, want 401", got.status)
	}
	if got := e.do("GET", "/v1/status", nil, "Authorization", "Bearer "+tok); got.status != http.StatusOK {
		t.Errorf("with the key = %d %s", got.status, got.body)
	}
	if _, err := e.db.RevokeAPIKey(ctx, "key_1", imprint.Now()); err != nil {
		t.Fatal(err)
	}
	for _, h := range [][]string{nil, {"Authorization", "Bearer " + tok}} {
		if got := e.do("GET", "/v1/status", nil, h...); got.status != http.StatusUnauthorized {
			t.Errorf("after revoking the only key (%v) = %d, want 401", h, got.status)
		}
	}
	if got := e.do("GET", "/healthz", nil); got.status != http.StatusOK {
		t.Errorf("/healthz = %d", got.status)
	}
}

// An API key's event stream gets the events of its scope only: not those
// of other scopes, and not those whose scope is unknown.
func TestAPIKeyEventStream(t *testing.T) {
	t.Parallel()
	e := newKeyEnv(t, Config{Token: testToken})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.ts.URL+"/v1/events?agent=coder", nil)
	req.Header.Set("Authorization", "Bearer "+e.ana)
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream = %d", resp.StatusCode)
	}
	waitFor(t, "the stream to subscribe", func() bool { return e.srv.hub.count() == 1 })
	e.srv.Publish(ctx, imprint.Event{Type: "capture.done", Payload: map[string]string{"secret": "of no known scope"}})
	e.srv.Publish(ctx, imprint.Event{Type: "capture.done", Scope: scopeB, Payload: map[string]string{"secret": "of bob"}})
	e.srv.Publish(ctx, imprint.Event{Type: "capture.done", Scope: scopeBeta, Payload: map[string]string{"secret": "of beta"}})
	e.srv.Publish(ctx, imprint.Event{Type: "capture.done", Scope: scopeA, Payload: map[string]string{"note": "of ana"}})
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "secret") {
			t.Fatalf("ana's stream got %s", line)
		}
		if strings.Contains(line, "of ana") {
			return
		}
	}
	t.Fatalf("ana's event never came: %v", sc.Err())
}

// FuzzKeyRestrict: whatever scope a request names, what a key lets
// through is within the key.
func FuzzKeyRestrict(f *testing.F) {
	f.Add("acme", "ana", "", "acme", "ana", "coder", true, true, false)
	f.Add("acme", "", "", "beta", "x", "y", true, false, true)
	f.Fuzz(func(t *testing.T, kt, ku, ka, st, su, sa string, gt, gu, ga bool) {
		if kt == "" {
			return
		}
		p := principal{key: &imprint.APIKey{ID: "k", Scope: imprint.KeyScope{Tenant: kt, User: ku, Agent: ka}}}
		sc, err := p.restrict(imprint.Scope{Tenant: st, User: su, Agent: sa}, [3]bool{gt, gu, ga})
		if err == nil && !p.key.Scope.Covers(sc) {
			t.Fatalf("key %s let %s through", p.key.Scope, sc)
		}
		if err != nil && !errors.Is(err, imprint.ErrForbidden) {
			t.Fatalf("restrict error %v is not forbidden", err)
		}
	})
}
