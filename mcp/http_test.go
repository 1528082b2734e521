package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/search"
)

const adminToken = "admin-secret"

// httpStack is the stack's MCP server mounted at /mcp on the real HTTP
// API, with the admin token and two keys: ana's (tenant acme, user ana)
// and a read-only key of tenant acme.
type httpStack struct {
	*stack
	ts          *httptest.Server
	ana, reader string
}

func newHTTPStack(t *testing.T) *httpStack {
	t.Helper()
	st := newStack(t)
	ctx := context.Background()
	mk := func(ks imprint.KeyScope, ro bool) string {
		k, tok := imprint.NewAPIKey(ks, "test", ro, imprint.Now())
		if err := st.db.CreateAPIKey(ctx, k, imprint.HashAPIKeyToken(tok)); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	searcher := search.Searcher{Store: st.db, Embedder: st.emb}
	api := httpapi.NewServer(httpapi.Deps{
		Store: st.db, Search: searcher, Recorder: record.NewRecorder(record.Deps{Store: st.db, Embedder: st.emb}, record.Config{}),
		Recall: search.Recaller{Searcher: searcher, Memories: st.db, Traces: st.db, Messages: st.db},
		MCP:    st.srv.Handler(),
	}, httpapi.Config{Token: adminToken})
	ts := httptest.NewServer(api)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		api.Close()
	})
	return &httpStack{stack: st, ts: ts, ana: mk(imprint.KeyScope{Tenant: "acme", User: "ann"}, false), reader: mk(imprint.KeyScope{Tenant: "acme"}, true)}
}

// bearer adds a token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(r)
}

// connectHTTP opens an MCP session over streamable HTTP with token; query
// is added to the endpoint (a scope).
func (h *httpStack) connectHTTP(t *testing.T, token, query string) (*sdk.ClientSession, error) {
	t.Helper()
	endpoint := h.ts.URL + "/mcp"
	if query != "" {
		endpoint += "?" + query
	}
	tr := &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestHTTPNeedsCredentials(t *testing.T) {
	t.Parallel()
	h := newHTTPStack(t)
	if _, err := h.connectHTTP(t, "", ""); err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Fatalf("connect without a token: %v, want 401", err)
	}
	if _, err := h.connectHTTP(t, "imp_wrong", ""); err == nil {
		t.Fatal("connect with an unknown token succeeded")
	}
}

// TestHTTPKeyScope: a key reaches its own scope only, as on every other
// route.
func TestHTTPKeyScope(t *testing.T) {
	t.Parallel()
	h := newHTTPStack(t)
	h.putMemory(t, "m-ann", "ann deploys on fridays", imprint.MemoryEpisodic)
	bob := imprint.Scope{Tenant: "acme", User: "bob", Agent: "default"}
	other := h.scope
	h.scope = bob
	h.putMemory(t, "m-bob", "bob deploys on fridays", imprint.MemoryEpisodic)
	h.scope = other

	cs, err := h.connectHTTP(t, h.ana, "")
	if err != nil {
		t.Fatal(err)
	}
	hits := structured[struct{ Hits []imprint.Hit }](t, callTool(t, cs, "search", map[string]any{"query": "deploys fridays", "kind": "memory"}))
	if len(hits.Hits) != 1 || hits.Hits[0].ID != "m-ann" {
		t.Fatalf("ana's key searched %+v, want m-ann only", hits.Hits)
	}
	rec := structured[imprint.RecordResult](t, callTool(t, cs, "record_messages", map[string]any{
		"session_id": "s-http", "messages": []any{map[string]any{"role": "user", "content": "we release on tuesdays"}}}))
	if rec.RecordedCount != 1 {
		t.Fatalf("record over HTTP: %+v", rec)
	}
	if _, err := h.db.GetSession(context.Background(), h.scope, "s-http"); err != nil {
		t.Fatalf("the recorded session is not in ana's scope: %v", err)
	}
	if _, err := h.connectHTTP(t, h.ana, "user=bob"); err == nil {
		t.Fatal("ana's key opened a session in bob's scope")
	}
	admin, err := h.connectHTTP(t, adminToken, "tenant=acme&user=bob")
	if err != nil {
		t.Fatal(err)
	}
	hits = structured[struct{ Hits []imprint.Hit }](t, callTool(t, admin, "search", map[string]any{"query": "deploys fridays", "kind": "memory"}))
	if len(hits.Hits) != 1 || hits.Hits[0].ID != "m-bob" {
		t.Fatalf("the admin in bob's scope searched %+v, want m-bob only", hits.Hits)
	}
}

func TestHTTPReadOnlyKey(t *testing.T) {
	t.Parallel()
	h := newHTTPStack(t)
	cs, err := h.connectHTTP(t, h.reader, "user=ann")
	if err != nil {
		t.Fatal(err)
	}
	structured[struct{ Hits []imprint.Hit }](t, callTool(t, cs, "search", map[string]any{"query": "anything"}))
	wantToolError(t, callTool(t, cs, "record_messages", map[string]any{
		"session_id": "s-ro", "messages": []any{map[string]any{"role": "user", "content": "hello there"}}}), "forbidden", "read-only")
	if _, err := h.db.GetSession(context.Background(), h.scope, "s-ro"); err == nil {
		t.Fatal("a read-only key recorded a session")
	}
}

// TestHTTPSessionBound: a session id is of no use to other credentials.
func TestHTTPSessionBound(t *testing.T) {
	t.Parallel()
	h := newHTTPStack(t)
	cs, err := h.connectHTTP(t, h.ana, "")
	if err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_memories","arguments":{}}}`
	for _, c := range []struct {
		token, query string
		want         int
	}{{h.reader, "user=ann", http.StatusForbidden}, {adminToken, "tenant=acme&user=ann", http.StatusForbidden}, {h.ana, "agent=other", http.StatusForbidden}} {
		req, _ := http.NewRequest(http.MethodPost, h.ts.URL+"/mcp?"+c.query, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("ana's session with other credentials (%s): %d, want %d", c.query, resp.StatusCode, c.want)
		}
	}
}

// TestHTTPPerimeter: the Host and origin rules of the HTTP API hold at /mcp.
func TestHTTPPerimeter(t *testing.T) {
	t.Parallel()
	h := newHTTPStack(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"rebinding host", map[string]string{"Host": "evil.example"}, http.StatusMisdirectedRequest},
		{"cross-site page", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"cross-site read of the stream", map[string]string{"Sec-Fetch-Site": "cross-site", "method": http.MethodGet}, http.StatusForbidden},
	} {
		method := http.MethodPost
		if m := c.header["method"]; m != "" {
			method = m
			delete(c.header, "method")
		}
		req, _ := http.NewRequest(method, h.ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range c.header {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
}
