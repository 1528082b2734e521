package mcp

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	imprint "github.com/imprint-dev/imprint"
)

// sessionHeader is the streamable HTTP transport's session id header.
const sessionHeader = "Mcp-Session-Id"

// SessionIdle is how long an HTTP session may go without a request before
// it is closed.
const SessionIdle = 30 * time.Minute

// Handler returns the streamable HTTP transport of the server, for the HTTP
// API to mount at /mcp behind its perimeter (Host, origin) and
// authentication. Every request must carry the imprint.Caller the HTTP API
// authenticated (imprint.WithCaller), else it is 401; the scope is the one the query names (tenant, user, agent), restricted to the key (imprint.Caller.Restrict); a session is bound to
// the caller that opened it, a request of another caller (other key,
// other scope) on it is 403, and one naming a session with no binding is
// 404 before the SDK sees it. The Host checks are the HTTP API's, so the
// SDK's own localhost check is off.
func (s *Server) Handler() http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.StreamableHTTPOptions{
		Logger:                     s.log,
		SessionTimeout:             SessionIdle,
		DisableLocalhostProtection: true,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := imprint.CallerOf(r.Context())
		if !ok {
			http.Error(w, "unauthorized: the MCP endpoint is served behind the HTTP API's authentication", http.StatusUnauthorized)
			return
		}
		b, err := bindingOf(c, r.URL.Query())
		if err != nil {
			status := http.StatusBadRequest
			if errors.Is(err, imprint.ErrForbidden) {
				status = http.StatusForbidden
			}
			http.Error(w, imprint.ErrorCode(err)+": "+err.Error(), status)
			return
		}
		if id := r.Header.Get(sessionHeader); id != "" {
			// Default-deny: a session id with no binding (unknown, closed,
			// or never bound) is not passed to the SDK, whoever asks.
			got, ok := s.boundCaller(id)
			if !ok {
				http.Error(w, "not found: no such MCP session (it ended or never existed); initialize a new one", http.StatusNotFound)
				return
			}
			if got != b {
				http.Error(w, "forbidden: this MCP session was opened with other credentials or another scope", http.StatusForbidden)
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(&bindingWriter{ResponseWriter: w, bind: func(id string) { s.bind(id, b) }}, r)
	})
}

// binding is who opened an HTTP session: the key (empty for the
// administrator) and the scope it acts in.
type binding struct {
	keyID    string
	readOnly bool
	scope    imprint.Scope
}

// bindingOf is the caller acting in the scope the endpoint's query names
// (tenant, user, agent; a part left out is the key's, else "default"),
// restricted to the caller's key: a part outside it is ErrForbidden.
func bindingOf(c imprint.Caller, q url.Values) (binding, error) {
	want := imprint.Scope{Tenant: strings.TrimSpace(q.Get("tenant")), User: strings.TrimSpace(q.Get("user")), Agent: strings.TrimSpace(q.Get("agent"))}
	sc, err := c.Restrict(want)
	if err != nil {
		return binding{}, err
	}
	if err := sc.Validate(); err != nil {
		return binding{}, err
	}
	b := binding{scope: sc, readOnly: c.ReadOnly()}
	if c.Key != nil {
		b.keyID = c.Key.ID
	}
	return b, nil
}

// bindingWriter binds the session id the SDK answers a new session's first
// request with to its caller, before the client can learn the id.
type bindingWriter struct {
	http.ResponseWriter
	bind  func(id string)
	bound bool
}

func (w *bindingWriter) check() {
	if w.bound {
		return
	}
	w.bound = true
	if id := w.Header().Get(sessionHeader); id != "" {
		w.bind(id)
	}
}

// WriteHeader implements http.ResponseWriter.
func (w *bindingWriter) WriteHeader(code int) {
	w.check()
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *bindingWriter) Write(b []byte) (int, error) {
	w.check()
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher, for the event streams.
func (w *bindingWriter) Flush() {
	w.check()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *bindingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
