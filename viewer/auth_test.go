package viewer_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/httpapi"
)

// makeKey stores an API key of scope and returns its token.
func makeKey(t *testing.T, e *env, scope imprint.KeyScope, readOnly bool) string {
	t.Helper()
	k, tok := imprint.NewAPIKey(scope, "viewer test", readOnly, imprint.Now())
	if err := e.db.CreateAPIKey(context.Background(), k, imprint.HashAPIKeyToken(tok)); err != nil {
		t.Fatal(err)
	}
	return tok
}

// login posts the key form as the viewer's page does and returns the
// cookie the server set.
func login(t *testing.T, e *env, key string) *http.Cookie {
	t.Helper()
	p := e.send("POST", "/login", strings.NewReader(url.Values{"key": {key}, "next": {"/memories"}}.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "same-origin", "Origin", e.ts.URL)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/memories" {
		t.Fatalf("POST /login: %d to %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	resp := http.Response{Header: p.header}
	for _, c := range resp.Cookies() {
		if c.Name == imprint.ViewerCookie {
			return c
		}
	}
	t.Fatalf("POST /login set no %s cookie: %v", imprint.ViewerCookie, p.header["Set-Cookie"])
	return nil
}

// With keys configured the viewer asks for one, keeps it in an HttpOnly,
// SameSite=Strict cookie, and the cookie opens the viewer's own pages and
// its event stream on same-origin requests only, within the key's scope.
func TestKeyCookie(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	seed(t, e.db)
	tok := makeKey(t, e, imprint.KeyScope{Tenant: "acme", User: "ana"}, false)

	p := e.get("/memories" + q(scopeA))
	if p.status != http.StatusUnauthorized || !strings.Contains(p.body, `name="key"`) || strings.Contains(p.body, "Lisbon") {
		t.Fatalf("GET /memories without a key: %d, want 401 and the key form\n%s", p.status, p.body)
	}
	// The key page offers nothing that needs a key: no navigation, scope
	// form, sign-out or event stream.
	for _, bad := range []string{"<nav>", `class="scope"`, "sign out", "data-events"} {
		if strings.Contains(p.body, bad) {
			t.Errorf("the key page shows %q:\n%s", bad, p.body)
		}
	}
	c := login(t, e, tok)
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Value != tok {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/ holding the key", c)
	}
	cookie := imprint.ViewerCookie + "=" + tok

	// The viewer's own requests.
	for _, site := range []string{"same-origin", "none"} {
		p := e.send("GET", "/memories?agent=coder", nil, "Cookie", cookie, "Sec-Fetch-Site", site)
		if p.status != 200 || !strings.Contains(p.body, "User booked a flight to Lisbon") {
			t.Errorf("GET /memories with the cookie (Sec-Fetch-Site %s): %d, want scope acme/ana/coder's memories\n%s", site, p.status, p.body)
		}
		has(t, "a page with the cookie", p, "<nav>", `class="scope"`, "sign out")
	}
	// Requests other origins make the browser send: the cookie is no key.
	for _, h := range [][]string{
		{"Sec-Fetch-Site", "same-site"}, {"Sec-Fetch-Site", "cross-site"}, {"Origin", "http://localhost:9"},
	} {
		p := e.send("GET", "/memories?agent=coder", nil, append([]string{"Cookie", cookie}, h...)...)
		if p.status != http.StatusUnauthorized || strings.Contains(p.body, "Lisbon") {
			t.Errorf("GET /memories with the cookie and %v: %d, want 401 and nothing of the store", h, p.status)
		}
	}
	// The API takes no cookie, but the event stream of the viewer.
	if p := e.send("GET", "/v1/memories?agent=coder", nil, "Cookie", cookie, "Sec-Fetch-Site", "same-origin"); p.status != http.StatusUnauthorized {
		t.Errorf("GET /v1/memories with the cookie: %d, want 401", p.status)
	}
	if st := streamStatus(t, e, "/v1/events?agent=coder", "Cookie", cookie, "Sec-Fetch-Site", "same-origin"); st != 200 {
		t.Errorf("the event stream with the cookie, same origin: %d, want 200", st)
	}
	if st := streamStatus(t, e, "/v1/events?agent=coder", "Cookie", cookie, "Sec-Fetch-Site", "same-site"); st == 200 {
		t.Errorf("the event stream with the cookie, from another origin of the site: %d, want a refusal", st)
	}
	// A key sees only its scope.
	if p := e.get("/memories?user=bob", "Cookie", cookie); p.status != http.StatusForbidden {
		t.Errorf("GET /memories of another user with ana's key: %d, want 403", p.status)
	}
	// A key the server does not know: asked again, the cookie dropped.
	p = e.get("/", "Cookie", imprint.ViewerCookie+"=imp_nope")
	if p.status != http.StatusUnauthorized || !strings.Contains(p.body, "was not accepted") || !strings.Contains(strings.Join(p.header["Set-Cookie"], ";"), "Max-Age=0") {
		t.Errorf("GET / with an unknown key: %d %v\n%s", p.status, p.header["Set-Cookie"], p.body)
	}
	// Another origin cannot sign the browser in.
	p = e.send("POST", "/login", strings.NewReader("key=imp_planted"), "Content-Type", "application/x-www-form-urlencoded",
		"Sec-Fetch-Site", "cross-site", "Origin", "http://evil.example")
	if p.status != http.StatusForbidden || len(p.header["Set-Cookie"]) != 0 {
		t.Errorf("cross-site POST /login: %d, cookies %v; want 403 and none", p.status, p.header["Set-Cookie"])
	}
	// A redirect after sign-in stays on this server.
	p = e.send("POST", "/login", strings.NewReader("key=x&next=//evil.example/"), "Content-Type", "application/x-www-form-urlencoded",
		"Sec-Fetch-Site", "same-origin")
	if p.header.Get("Location") != "/" {
		t.Errorf("POST /login with next=//evil.example/ goes to %q, want /", p.header.Get("Location"))
	}
}

// The admin token works as a key too; a read-only key reads but is not
// offered edits.
func TestAdminTokenAndReadOnlyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{Token: "admin-secret"})
	seed(t, e.db)
	if p := e.get("/" + q(scopeA)); p.status != http.StatusUnauthorized {
		t.Fatalf("GET / without a key while the admin token is set: %d, want 401", p.status)
	}
	c := login(t, e, "admin-secret")
	if p := e.get("/"+q(scopeA), "Cookie", c.Name+"="+c.Value); p.status != 200 || !strings.Contains(p.body, "<b>3</b> messages") {
		t.Errorf("GET / with the admin token's cookie: %d\n%s", p.status, p.body)
	}
	ro := makeKey(t, e, imprint.KeyScope{Tenant: "acme"}, true)
	p := e.get("/memories/mem-seat"+q(scopeA), "Cookie", imprint.ViewerCookie+"="+ro)
	if p.status != 200 || strings.Contains(p.body, "edit-form") || !strings.Contains(p.body, "read-only") {
		t.Errorf("a memory with a read-only key: %d, edit form shown %v", p.status, strings.Contains(p.body, "edit-form"))
	}
	if p := e.post("/memories/mem-seat/edit"+q(scopeA), url.Values{"content": {"planted"}}, "Cookie", imprint.ViewerCookie+"="+ro); p.status != http.StatusForbidden {
		t.Errorf("an edit posted with a read-only key: %d, want 403", p.status)
	}
	// Signing out works for a read-only key too.
	if p := e.send("POST", "/logout", nil, "Cookie", imprint.ViewerCookie+"="+ro, "Sec-Fetch-Site", "same-origin"); p.status != http.StatusSeeOther {
		t.Errorf("POST /logout with a read-only key: %d, want 303", p.status)
	}
}

// streamStatus opens an event stream and returns its status.
func streamStatus(t *testing.T, e *env, path string, h ...string) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.ts.URL+path, nil)
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
