package httpapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// send sends a request after edit changed it (its Host, its headers).
func (e *env) send(method, path, body string, edit func(r *http.Request)) reply {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if edit != nil {
		edit(req)
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		return reply{status: resp.StatusCode, header: resp.Header} // an open stream never ends
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

const guardMsg = `{"session_id":"g1","messages":[{"role":"user","content":"plant this"}]}`

// TestHostAllowList checks the DNS-rebinding defence: a write or a read
// naming a host the server does not serve gets 421 and touches nothing,
// while loopback names and addresses in every form, and the configured
// allowed hosts, are served.
func TestHostAllowList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{AllowedHosts: []string{"Imprint.Example.COM", "*.team.example", "[2001:db8::7]:8420"}})
	port := e.ts.URL[strings.LastIndex(e.ts.URL, ":"):]
	allowed := []string{
		"127.0.0.1" + port, "127.0.0.1", "127.9.8.7:80", "localhost", "LOCALHOST" + port, "localhost.",
		"app.localhost" + port, "[::1]" + port, "[::1]",
		"imprint.example.com", "IMPRINT.example.com:443", "a.team.example", "b.a.team.example:1", "[2001:db8::7]",
	}
	for _, h := range allowed {
		if r := e.send("GET", "/v1/status", "", func(r *http.Request) { r.Host = h }); r.status != http.StatusOK {
			t.Errorf("Host %q: GET /v1/status = %d %s, want 200", h, r.status, r.body)
		}
	}
	rejected := []string{
		"evil.example", "evil.example" + port, "localhost.evil.example", "127.0.0.1.evil.example", "127.0.0.1:80.evil.example",
		"notlocalhost", "team.example", "imprint.example.com.evil", "10.0.0.1" + port, "[::2]" + port, "0.0.0.0" + port,
	}
	before := e.counts()
	for _, h := range rejected {
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/v1/messages", guardMsg},
			{"GET", "/v1/memories", ""},
			{"GET", "/", ""},
		} {
			r := e.send(c.method, c.path, c.body, func(r *http.Request) { r.Host = h })
			if r.status != http.StatusMisdirectedRequest {
				t.Errorf("Host %q: %s %s = %d, want 421", h, c.method, c.path, r.status)
				continue
			}
			if code, _ := r.errCode(t); code != CodeMisdirected {
				t.Errorf("Host %q: code %q, want %q", h, code, CodeMisdirected)
			}
		}
	}
	e.unchanged(before, "requests to hosts not served")
	if r := e.send("POST", "/v1/messages", guardMsg, nil); r.status != http.StatusOK {
		t.Fatalf("the same write to the loopback address: %d %s", r.status, r.body)
	}
}

// TestHostOfTheConnection checks what a server bound to a non-loopback
// address serves without allowed hosts: the IP address the connection came
// in on, and no other.
func TestHostOfTheConnection(t *testing.T) {
	t.Parallel()
	p := newPerimeter(nil)
	local := &net.TCPAddr{IP: net.ParseIP("192.0.2.5"), Port: 8420}
	for host, want := range map[string]bool{
		"192.0.2.5:8420": true, "192.0.2.5": true, "192.0.2.6:8420": false, "imprint.lan:8420": false, "localhost": true,
	} {
		r := httptest.NewRequest("GET", "/v1/status", nil)
		r.Host = host
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(local)))
		if got := p.hostAllowed(r); got != want {
			t.Errorf("Host %q on a connection to %s: allowed %v, want %v", host, local, got, want)
		}
	}
}

// TestCrossOriginRequests checks that what another web page makes the
// user's browser send is refused with 403 forbidden, writes nothing, and
// that same-origin pages and non-browser clients are served.
func TestCrossOriginRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	sec := func(site string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", site) }
	}
	origin := func(o string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Origin", o) }
	}
	refused := []struct {
		name             string
		method, path, bd string
		edit             func(*http.Request)
	}{
		{"cross-site POST", "POST", "/v1/messages", guardMsg, sec("cross-site")},
		{"same-site POST (another loopback port)", "POST", "/v1/episodes", `{}`, sec("same-site")},
		{"cross-site empty POST", "POST", "/v1/sessions/s1/end", "", sec("cross-site")},
		{"foreign Origin without Sec-Fetch-Site", "POST", "/v1/messages", guardMsg, origin("http://evil.example")},
		{"other port Origin", "POST", "/v1/messages", guardMsg, origin("http://127.0.0.1:1")},
		{"cross-site read", "GET", "/v1/memories", "", sec("cross-site")},
		{"same-site event stream", "GET", "/v1/events", "", sec("same-site")},
		{"cross-site metrics", "GET", "/metrics", "", sec("cross-site")},
	}
	before := e.counts()
	for _, c := range refused {
		r := e.send(c.method, c.path, c.bd, c.edit)
		if r.status != http.StatusForbidden {
			t.Errorf("%s: %s %s = %d %s, want 403", c.name, c.method, c.path, r.status, r.body)
			continue
		}
		if code, _ := r.errCode(t); code != CodeForbidden {
			t.Errorf("%s: code %q, want %q", c.name, code, CodeForbidden)
		}
	}
	e.unchanged(before, "cross-origin requests")

	served := []struct {
		name         string
		method, path string
		edit         func(*http.Request)
		want         int
	}{
		{"curl (no browser headers)", "POST", "/v1/messages", nil, http.StatusOK},
		{"same-origin page", "POST", "/v1/messages", sec("same-origin"), http.StatusOK},
		{"typed by the user", "POST", "/v1/messages", sec("none"), http.StatusOK},
		{"own Origin", "POST", "/v1/messages", origin(e.ts.URL), http.StatusOK},
		{"navigation to the viewer", "GET", "/", sec("cross-site"), http.StatusOK},
		{"health check from anywhere", "GET", "/healthz", sec("cross-site"), http.StatusOK},
		{"same-origin read", "GET", "/v1/memories", sec("same-origin"), http.StatusOK},
	}
	for _, c := range served {
		body := ""
		if c.method == "POST" {
			body = guardMsg
		}
		if r := e.send(c.method, c.path, body, c.edit); r.status != c.want {
			t.Errorf("%s: %s %s = %d %s, want %d", c.name, c.method, c.path, r.status, r.body, c.want)
		}
	}
	if got := e.counts()["messages"]; got <= before["messages"] {
		t.Errorf("messages after the served writes: %d, want more than %d", got, before["messages"])
	}
}

// TestJSONBodiesOnly checks that a /v1 body must be declared JSON, the one
// body type a page cannot send to another origin without a preflight: other
// types get 415 unsupported_media_type and write nothing; an empty POST
// needs no type.
func TestJSONBodiesOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctype := func(ct string) func(*http.Request) {
		return func(r *http.Request) {
			if ct == "" {
				r.Header.Del("Content-Type")
			} else {
				r.Header.Set("Content-Type", ct)
			}
		}
	}
	before := e.counts()
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x", "", "application/jsonx", "text/json", "application/json-seq", "application/json; charset"} {
		for _, path := range []string{"/v1/messages", "/v1/episodes", "/v1/sessions/s1/turns"} {
			r := e.send("POST", path, guardMsg, ctype(ct))
			if r.status != http.StatusUnsupportedMediaType {
				t.Errorf("Content-Type %q: POST %s = %d %s, want 415", ct, path, r.status, r.body)
				continue
			}
			if code, _ := r.errCode(t); code != CodeUnsupportedMediaType {
				t.Errorf("Content-Type %q: code %q", ct, code)
			}
		}
	}
	// A body of unknown length (chunked) is held to the same rule.
	chunked := func(ct string) func(*http.Request) {
		return func(r *http.Request) {
			ctype(ct)(r)
			r.Body = io.NopCloser(strings.NewReader(guardMsg))
			r.ContentLength = -1
		}
	}
	if r := e.send("POST", "/v1/messages", guardMsg, chunked("text/plain")); r.status != http.StatusUnsupportedMediaType {
		t.Errorf("chunked text/plain body: %d, want 415", r.status)
	}
	e.unchanged(before, "bodies that are not JSON")

	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON;Charset=UTF-8"} {
		if r := e.send("POST", "/v1/messages", guardMsg, ctype(ct)); r.status != http.StatusOK {
			t.Errorf("Content-Type %q: %d %s, want 200", ct, r.status, r.body)
		}
	}
	if r := e.send("POST", "/v1/messages", guardMsg, chunked("application/json")); r.status != http.StatusOK {
		t.Errorf("chunked JSON body: %d %s, want 200", r.status, r.body)
	}
	if r := e.send("POST", "/v1/sessions/s1/end", "", nil); r.status != http.StatusAccepted {
		t.Errorf("empty POST without a Content-Type: %d %s, want 202", r.status, r.body)
	}
}

// FuzzHostAllowed checks that no Host value panics the check and that a
// name under a domain the server does not serve is never served, whatever
// comes before it.
func FuzzHostAllowed(f *testing.F) {
	for _, s := range []string{"localhost", "127.0.0.1:8420", "[::1]", "a.localhost", "x.", "[", "]:", "::1", "*.", "%00", "imprint.example.com"} {
		f.Add(s)
	}
	p := newPerimeter([]string{"imprint.example.com", "*.team.example"})
	f.Fuzz(func(t *testing.T, host string) {
		r := httptest.NewRequest("GET", "/v1/status", nil)
		r.Host = host
		_ = p.hostAllowed(r)
		for _, suffix := range []string{".evil.example", ".evil.example:8420", ".evil.example."} {
			r.Host = host + suffix
			if p.hostAllowed(r) {
				t.Errorf("Host %q is served", r.Host)
			}
		}
	})
}

// FuzzJSONBody checks that no Content-Type panics the check and that a
// body passes only under the JSON media type.
func FuzzJSONBody(f *testing.F) {
	for _, s := range []string{"application/json", "application/json; charset=utf-8", "text/plain", "", ";", "application/json;;", "APPLICATION/JSON ; a=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		r := httptest.NewRequest("POST", "/v1/messages", strings.NewReader("{}"))
		r.Header.Set("Content-Type", ct)
		if jsonBody(r) {
			mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
			if !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
				t.Errorf("Content-Type %q passes as JSON", ct)
			}
		}
	})
}
