package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	imprint "github.com/imprint-dev/imprint"
)

// sessionServer serves s.Handler() with the caller of the X-Key header
// (a key of that id in tenant acme), as the HTTP API would after
// authentication.
func sessionServer(t *testing.T) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(Deps{}, Config{Scope: imprint.DefaultScope()})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := &imprint.APIKey{ID: r.Header.Get("X-Key"), Scope: imprint.KeyScope{Tenant: "acme"}}
		h.ServeHTTP(w, r.WithContext(imprint.WithCaller(r.Context(), imprint.Caller{Key: key})))
	}))
	t.Cleanup(ts.Close)
	return s, ts
}

type keyHeader string

func (k keyHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Key", string(k))
	return http.DefaultTransport.RoundTrip(r)
}

func openSession(t *testing.T, url, key string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: keyHeader(key)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func postTo(t *testing.T, url, key, session, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("X-Key", key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(sessionHeader, session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestHTTPUnboundSession: a request naming a session the SDK knows but
// that has no binding (as when a binding was lost) is 404 for any key,
// never served; an unknown id is 404 too.
func TestHTTPUnboundSession(t *testing.T) {
	t.Parallel()
	s, ts := sessionServer(t)
	cs := openSession(t, ts.URL, "k-ana")
	s.mu.Lock()
	delete(s.callers, cs.ID())
	s.mu.Unlock()
	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	for _, key := range []string{"k-ana", "k-mallory"} {
		if got := postTo(t, ts.URL, key, cs.ID(), list); got != http.StatusNotFound {
			t.Errorf("unbound session with key %s: %d, want 404", key, got)
		}
	}
	if got := postTo(t, ts.URL, "k-ana", "no-such-session", list); got != http.StatusNotFound {
		t.Errorf("unknown session: %d, want 404", got)
	}
}

// TestHTTPConcurrentInitialize: sessions opened at the same time each keep
// their binding (a bind of one must not prune another just opened), so each
// works for its key and is refused to another.
func TestHTTPConcurrentInitialize(t *testing.T) {
	t.Parallel()
	s, ts := sessionServer(t)
	const n = 24
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = openSession(t, ts.URL, fmt.Sprintf("k-%d", i)).ID()
		}()
	}
	wg.Wait()
	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	for i, id := range ids {
		if _, ok := s.boundCaller(id); !ok {
			t.Errorf("session %d (%s) lost its binding", i, id)
			continue
		}
		if got := postTo(t, ts.URL, fmt.Sprintf("k-%d", (i+1)%n), id, list); got != http.StatusForbidden {
			t.Errorf("session %d with another key: %d, want 403", i, got)
		}
	}
}
