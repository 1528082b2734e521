package httpapi

import (
	"mime"
	"net"
	"net/http"
	"strings"
)

// Error codes of the perimeter checks.
const (
	// CodeMisdirected answers a Host the server does not serve (421).
	CodeMisdirected = "misdirected"
	// CodeUnsupportedMediaType answers a /v1 request body that is not
	// JSON (415).
	CodeUnsupportedMediaType = "unsupported_media_type"
)

// perimeter is what every request passes before authorization: the Host
// allow-list against DNS rebinding, the cross-origin protection against
// requests other web pages make the user's browser send, and JSON-only
// bodies on /v1, which a form or a no-cors fetch cannot send without a
// CORS preflight the server never grants.
type perimeter struct {
	// hosts are server.allowed_hosts, lower-cased, without ports; an entry
	// "*.example.com" allows the subdomains of example.com.
	hosts []string
	cop   *http.CrossOriginProtection
}

func newPerimeter(allowed []string) *perimeter {
	p := &perimeter{cop: http.NewCrossOriginProtection()}
	for _, h := range allowed {
		if h = normalHost(h); h != "" {
			p.hosts = append(p.hosts, h)
		}
	}
	return p
}

// guard answers the request with an error and returns false when it may
// not reach the handlers.
func (s *Server) guard(w http.ResponseWriter, r *http.Request) bool {
	// The API's answers are data, never a page to frame.
	w.Header().Set("X-Frame-Options", "DENY")
	if !s.perimeter.hostAllowed(r) {
		writeErrorStatus(w, http.StatusMisdirectedRequest, CodeMisdirected,
			"this server does not serve the host "+quoteHost(r.Host)+" (add it to server.allowed_hosts)")
		return false
	}
	if err := s.perimeter.cop.Check(r); err != nil {
		writeErrorStatus(w, http.StatusForbidden, CodeForbidden, "cross-origin request refused: "+err.Error())
		return false
	}
	if crossSiteRead(r) {
		writeErrorStatus(w, http.StatusForbidden, CodeForbidden,
			"cross-origin request refused: "+r.URL.Path+" is read only by its own origin and non-browser clients")
		return false
	}
	if strings.HasPrefix(r.URL.Path, "/v1/") && !jsonBody(r) {
		writeErrorStatus(w, http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
			"a request body must be JSON, sent with Content-Type: application/json")
		return false
	}
	return true
}

// hostAllowed reports whether r names a host the server serves: a
// loopback name or address, an entry of server.allowed_hosts, or the IP
// address the connection came in on (a name only DNS can point here, an
// address literal only this machine answers to).
func (p *perimeter) hostAllowed(r *http.Request) bool {
	h := normalHost(r.Host)
	if h == "" {
		return false
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if ip := net.ParseIP(h); ip != nil {
		if ip.IsLoopback() {
			return true
		}
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if ta, ok := la.(*net.TCPAddr); ok && ta.IP.Equal(ip) {
				return true
			}
		}
	}
	for _, a := range p.hosts {
		if a == h || (strings.HasPrefix(a, "*.") && strings.HasSuffix(h, a[1:])) {
			return true
		}
	}
	return false
}

// normalHost is a Host value or an allowed_hosts entry without its port
// and brackets, lower-cased, without a trailing dot; "" when its port is
// not a number.
func normalHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, port, err := net.SplitHostPort(h); err == nil {
		if strings.Trim(port, "0123456789") != "" {
			return "" // "127.0.0.1:80.evil.example" names no host of ours
		}
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(h, ".")
}

// quoteHost is a Host value safe to put in a message.
func quoteHost(h string) string {
	if len(h) > 100 {
		h = h[:100] + "…"
	}
	return `"` + strings.ToValidUTF8(h, "?") + `"`
}

// crossSiteRead reports whether r is a read of the API that another
// origin's page made the browser send (an <img>, <script>, EventSource or
// no-cors fetch). The browser would not let that page read the answer, but
// the answer's size, timing and status still leak, so the API refuses it.
// Navigations to the viewer page and /healthz stay allowed.
func crossSiteRead(r *http.Request) bool {
	if !strings.HasPrefix(r.URL.Path, "/v1/") && r.URL.Path != "/metrics" && r.URL.Path != mcpPath {
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return false
	}
	return true
}

// jsonBody reports whether r's body is empty or declared JSON: media type
// application/json, any parameters, any letter case. A body of unknown
// length (chunked) counts as not empty: peeking at it could wait on a
// stalled client before any deadline is set.
func jsonBody(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return true
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}
