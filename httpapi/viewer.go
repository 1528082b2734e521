package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// viewerPath reports whether path is the web viewer's: everything but the
// API, the MCP endpoint, the health check and the metrics.
func viewerPath(path string) bool {
	switch {
	case strings.HasPrefix(path, "/v1/"), path == "/v1", path == "/healthz", path == "/metrics",
		path == "/mcp", strings.HasPrefix(path, "/mcp/"):
		return false
	}
	return true
}

// viewerCookie returns the key kept in the viewer's cookie (imprint.ViewerCookie)
// when r may use it: a request of the viewer's own pages (a page, a form
// post, its event stream) made from the viewer's origin. A request another
// origin made the browser send never authenticates with it, even one of
// the same site (another port of localhost), which SameSite=Strict lets
// through.
func viewerCookie(r *http.Request) (string, bool) {
	if !viewerPath(r.URL.Path) && r.URL.Path != "/v1/events" {
		return "", false
	}
	c, err := r.Cookie(imprint.ViewerCookie)
	if err != nil || c.Value == "" {
		return "", false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin":
		return c.Value, true
	case "none":
		// Typed or bookmarked by the user: a page, never the API.
		return c.Value, viewerPath(r.URL.Path) && (r.Method == http.MethodGet || r.Method == http.MethodHead)
	case "":
		// Browsers send no fetch metadata to origins that are not
		// potentially trustworthy (http:// on a name other than
		// localhost): the Origin, when given, must be ours.
		o := r.Header.Get("Origin")
		if o == "" {
			return c.Value, true
		}
		u, err := url.Parse(o)
		return c.Value, err == nil && strings.EqualFold(u.Host, r.Host)
	}
	return "", false
}

// serveViewer hands a viewer request to Deps.Viewer, with its caller in
// the context when it authenticated; a request without valid credentials
// reaches the viewer without one, which then asks for a key.
func (s *Server) serveViewer(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	p, err := s.authenticate(r)
	if err == nil && r.URL.Path != "/login" && r.URL.Path != "/logout" {
		err = p.authorize(r)
	}
	switch {
	case err == nil:
		ctx = imprint.WithCaller(ctx, imprint.Caller{Key: p.key})
	case !errors.Is(err, imprint.ErrUnauthorized):
		s.fail(w, r, err)
		return
	}
	s.d.Viewer.ServeHTTP(w, r.WithContext(ctx))
}
