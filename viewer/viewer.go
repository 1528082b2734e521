package viewer

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Page sizes: every page reads at most this many records of a kind.
const (
	pageSize    = 50
	maxPageSize = 1000
)

// Deps are what the viewer reads and writes through. Store is required;
// without Search and Recall the search page says so, without Memories
// memories cannot be edited or forgotten.
type Deps struct {
	Store imprint.ServiceStore
	// Search runs hybrid search (search.Searcher). When Recall can also
	// search (SearchAndRecall, as search.Recaller does), the search page
	// asks it for both, so wire Recall over the same Searcher.
	Search imprint.Search
	// Recall builds the recall block a query would inject (search.Recaller).
	Recall imprint.Recall
	// Memories edits and forgets memories (curate.Manager), as the
	// memory-management API does.
	Memories imprint.Memories
	Logger   *slog.Logger
}

// Handler serves the viewer's pages. Its routes expect the HTTP API in
// front: a request whose context holds no imprint.Caller is answered with
// the page that asks for a key.
type Handler struct {
	d     Deps
	log   *slog.Logger
	mux   *http.ServeMux
	pages map[string]*template.Template
}

// New returns the viewer over d.
func New(d Deps) (*Handler, error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{d: d, log: d.Logger, mux: http.NewServeMux(), pages: map[string]*template.Template{}}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("viewer templates: %w", err)
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("viewer template %s: %w", base, err)
		}
		h.pages[base] = t
	}
	h.routes()
	return h, nil
}

func (h *Handler) routes() {
	page := func(pattern string, fn func(w http.ResponseWriter, r *http.Request, v *view) error) {
		h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			v, ok := h.viewOf(w, r)
			if !ok {
				return
			}
			if err := fn(w, r, v); err != nil {
				h.fail(w, r, v, err)
			}
		})
	}
	page("GET /{$}", h.overview)
	page("GET /memories", h.memories)
	page("GET /memories/{id}", h.memory)
	page("GET /episodes", h.episodes)
	page("GET /episodes/{id}", h.episode)
	page("GET /sessions", h.sessions)
	page("GET /sessions/{id}", h.session)
	page("POST /memories/{id}/edit", h.editMemory)
	page("POST /memories/{id}/forget", h.forgetMemory)
	page("GET /search", h.search)
	page("GET /live", h.live)
	h.mux.HandleFunc("GET /login", h.loginPage)
	h.mux.HandleFunc("POST /login", h.login)
	h.mux.HandleFunc("POST /logout", h.logout)
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	h.mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		v, ok := h.viewOf(w, r)
		if !ok {
			return
		}
		h.fail(w, r, v, imprint.NotFoundf("no page %s %s", r.Method, r.URL.Path))
	})
}

// ServeHTTP sets the pages' security headers and dispatches.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	h.mux.ServeHTTP(w, r)
}

// view is what every page knows: who asks, for which scope, and the
// query that chose it.
type view struct {
	Caller imprint.Caller
	Scope  imprint.Scope
	// scopeQ holds the scope parameters the request named, kept in every
	// link.
	scopeQ url.Values
	Title  string
	Nav    string
	Data   any
	Error  string
	Status int
	// signedIn says the request carries a caller; the key page has none
	// and shows no navigation, scope form or sign-out.
	signedIn bool
}

// SignedIn reports whether the page is shown to a known caller.
func (v *view) SignedIn() bool { return v.signedIn }

// viewOf returns the request's view, or answers it with the key page when
// it carries no credentials.
func (h *Handler) viewOf(w http.ResponseWriter, r *http.Request) (*view, bool) {
	c, ok := imprint.CallerOf(r.Context())
	if !ok {
		h.askKey(w, r, "")
		return nil, false
	}
	q := r.URL.Query()
	v := &view{Caller: c, scopeQ: url.Values{}, signedIn: true}
	var want imprint.Scope
	for key, dst := range map[string]*string{"tenant": &want.Tenant, "user": &want.User, "agent": &want.Agent} {
		if val := strings.TrimSpace(q.Get(key)); val != "" {
			*dst = val
			v.scopeQ.Set(key, val)
		}
	}
	sc, err := c.Restrict(want)
	if err == nil {
		err = sc.Validate()
	}
	if err != nil {
		v.Scope = imprint.DefaultScope()
		h.fail(w, r, v, err)
		return nil, false
	}
	v.Scope = sc
	return v, true
}

// Link returns path with the view's scope and the extra key, value pairs
// as its query; empty values are left out.
func (v *view) Link(path string, kv ...string) string {
	q := url.Values{}
	for k, vals := range v.scopeQ {
		q[k] = vals
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// EventsURL is the event stream of the view's scope.
func (v *view) EventsURL() string {
	return "/v1/events?" + url.Values{"tenant": {v.Scope.Tenant}, "user": {v.Scope.User}, "agent": {v.Scope.Agent}}.Encode()
}

// CanWrite reports whether the caller may edit and forget.
func (v *view) CanWrite() bool { return !v.Caller.ReadOnly() }

// render writes the page name with v.
func (h *Handler) render(w http.ResponseWriter, name string, v *view) error {
	t, ok := h.pages[name]
	if !ok {
		return fmt.Errorf("viewer: no template %q", name)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if v.Status != 0 {
		w.WriteHeader(v.Status)
	}
	_, _ = w.Write(buf.Bytes())
	return nil
}

// fail answers err as an error page with the status of its kind.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, v *view, err error) {
	status := http.StatusInternalServerError
	msg := "internal error"
	switch {
	case errors.Is(err, imprint.ErrNotFound):
		status, msg = http.StatusNotFound, err.Error()
	case errors.Is(err, imprint.ErrInvalid):
		status, msg = http.StatusBadRequest, err.Error()
	case errors.Is(err, imprint.ErrForbidden):
		status, msg = http.StatusForbidden, err.Error()
	case errors.Is(err, imprint.ErrConflict):
		status, msg = http.StatusConflict, err.Error()
	default:
		h.log.ErrorContext(r.Context(), "viewer page failed", "path", r.URL.Path, "err", err)
	}
	v.Title, v.Error, v.Status = "Error", msg, status
	if rerr := h.render(w, "error", v); rerr != nil {
		http.Error(w, msg, status)
	}
}

// intParam reads a positive integer query parameter, def when absent,
// capped at max.
func intParam(r *http.Request, name string, def, max int) int {
	n, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil || n <= 0 {
		return def
	}
	return min(n, max)
}

var funcs = template.FuncMap{
	"when": func(t imprint.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.Time.UTC().Format("2006-01-02 15:04:05")
	},
	"ago": func(t imprint.Time) string {
		if t.IsZero() {
			return "never"
		}
		d := time.Since(t.Time)
		switch {
		case d < time.Minute:
			return "just now"
		case d < time.Hour:
			return fmt.Sprintf("%d min ago", int(d.Minutes()))
		case d < 48*time.Hour:
			return fmt.Sprintf("%d h ago", int(d.Hours()))
		}
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	},
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"short": func(s string, n int) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		return string(r[:n]) + "…"
	},
	// pathEscape makes an id one path segment: a "?", "#", "/" or "%" in
	// it stays part of the id (the handlers' PathValue decodes it).
	"pathEscape": url.PathEscape,
	"json":       func(b []byte) string { return string(b) },
	"pct":        func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
	"add":        func(a, b int) int { return a + b },
	"derefF": func(f *float64) float64 {
		if f == nil {
			return 0
		}
		return *f
	},
	"memCount": func(m map[imprint.MemoryType]int, t string) int { return m[imprint.MemoryType(t)] },
	"navItems": func() []navItem { return nav },
	"cardOf":   func(v *view, c episodeCard) cardView { return cardView{V: v, C: c} },
	// scopeFields are the scope parameters a filter form keeps.
	"scopeFields": func(v *view) map[string]string {
		out := map[string]string{}
		for k := range v.scopeQ {
			out[k] = v.scopeQ.Get(k)
		}
		return out
	},
	"kinds": func() []string { return []string{"", "memory", "trace", "message"} },
}

type navItem struct{ Key, Name, Path string }

var nav = []navItem{
	{"overview", "Overview", "/"}, {"memories", "Memories", "/memories"}, {"episodes", "Episodes", "/episodes"},
	{"sessions", "Sessions", "/sessions"}, {"search", "Search", "/search"}, {"live", "Live", "/live"},
}

type cardView struct {
	V *view
	C episodeCard
}
