package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// Defaults of Config.
const (
	DefaultRequestTimeout    = 30 * time.Second
	DefaultMaxBodyBytes      = 8 << 20
	DefaultHeartbeatInterval = 15 * time.Second
)

// writeSlack is how long past its request timeout a reply may take to
// write, so a request that ran out of time still gets its error body.
const writeSlack = 5 * time.Second

// Sessions is the episode manager of live sessions (*session.Manager).
type Sessions interface {
	// AppendTurns appends turns to the session's open episode, opening one
	// when there is none, records the user and assistant text turns as L0
	// messages, and returns the open episode after the append.
	AppendTurns(ctx context.Context, scope imprint.Scope, sessionID string, turns []imprint.Turn) (imprint.Episode, error)
	// Finalize closes the session's open episode and enqueues its capture;
	// ErrNotFound when the session has no open episode.
	Finalize(ctx context.Context, scope imprint.Scope, sessionID string, closedBy imprint.ClosedBy) (imprint.Episode, error)
	// End finalizes the open episode, if any, and forces extraction of the
	// pending messages; it returns the closed episode's id (nil when none
	// was open) and the number of pending messages.
	End(ctx context.Context, scope imprint.Scope, sessionID string) (*string, int, error)
}

// CallLog sums the LLM calls made in this process by op
// (*llm.MemoryRecorder).
type CallLog interface {
	Usage() map[string]imprint.LLMUsage
}

// Budget reports a scope's LLM budget (*llm.Budget); limits of 0 mean
// there is none.
type Budget interface {
	State(ctx context.Context, scope imprint.Scope) (imprint.BudgetState, error)
}

// Recorder records L0 messages (*record.Recorder).
type Recorder interface {
	Record(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) (imprint.RecordResult, error)
}

// Jobs enqueues durable jobs (schedule.Scheduler).
type Jobs interface {
	Enqueue(ctx context.Context, j imprint.Job) (imprint.Job, error)
}

// waker is what a scheduler offers to look for work now instead of at its
// next poll.
type waker interface{ Wake() }

// Deps are what a Server works with. Store is required; without Recorder
// POST /v1/messages answers 500, without Sessions the session endpoints
// do, without Jobs the extract endpoint does.
type Deps struct {
	Store    imprint.ServiceStore
	Recorder Recorder
	Sessions Sessions
	Jobs     Jobs
	// Ingest queues what recording messages made due (extraction, the
	// embedding retry) and the extraction a client asks for; nil queues
	// nothing after a recording, and the extract endpoint answers 500.
	Ingest imprint.Ingest
	// Search runs hybrid search (search.Searcher over Store); nil answers
	// GET /v1/search with 500.
	Search imprint.Search
	// Recall builds recall blocks (search.Recaller over Search and Store);
	// nil answers GET /v1/recall with 500.
	Recall imprint.Recall
	// Memories manages memories by hand (curate.Manager over Store): nil
	// answers POST, PATCH and DELETE /v1/memories with 500.
	Memories imprint.Memories
	// Calls is the in-process LLM call log for /metrics and /v1/status;
	// nil reads the usage from Store.
	Calls CallLog
	// Budget is the LLM client's budget (llm.budget), reported by
	// /v1/status; nil when there is none.
	Budget Budget
	Logger *slog.Logger
	// Redact replaces secrets in a text (redact.String in the binary); a
	// posted episode is redacted before it is stored. Nil keeps texts as
	// given.
	Redact func(string) string
	// Viewer serves the web viewer (viewer.Handler) at / and every path
	// outside /v1/, /mcp, /healthz and /metrics, behind the same Host and
	// origin checks. It gets the request's imprint.Caller in its context
	// when the request carried valid credentials (a header, or the
	// viewer's cookie on a same-origin request), none otherwise, so it can
	// ask for a key. Nil serves the status page at /.
	Viewer http.Handler
	// MCP is the MCP server's streamable HTTP transport (mcp.Server's
	// Handler), served at /mcp behind the same perimeter and
	// authentication; each request carries its imprint.Caller. Nil leaves
	// /mcp unrouted (404).
	MCP http.Handler
}

// Config tunes a Server. Zero values take the defaults.
type Config struct {
	// Token is the admin key (server.api_token): "Authorization: Bearer
	// <token>" reaches every scope. When it is set, or once an API key
	// exists, every request but /healthz needs it or a key.
	Token string
	// RequestTimeout bounds every request but the event stream.
	RequestTimeout time.Duration
	// MaxBodyBytes bounds request bodies; larger ones get 413.
	MaxBodyBytes int64
	// MaxTurnsPerRequest bounds the messages or turns of one request;
	// more get 413 (default DefaultMaxTurnsPerRequest).
	MaxTurnsPerRequest int
	// HeartbeatInterval is how often an idle event stream gets a comment
	// line, so proxies and clients see it alive.
	HeartbeatInterval time.Duration
	// AllowedHosts are the Host names served besides loopback names and
	// addresses and the address a connection came in on (server.allowed_hosts);
	// "*.example.com" allows the subdomains of example.com. Other hosts get 421.
	AllowedHosts []string
}

func (c Config) withDefaults() Config {
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxTurnsPerRequest <= 0 {
		c.MaxTurnsPerRequest = DefaultMaxTurnsPerRequest
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	return c
}

// Server is the HTTP API. It implements http.Handler and is safe for
// concurrent use.
type Server struct {
	d       Deps
	cfg     Config
	log     *slog.Logger
	mux     *http.ServeMux
	hub     *hub
	metrics *counters
	started time.Time
	// patterns are the routes, for the tests that must cover each one.
	patterns []string
	// perimeter checks Host, origin and media type before anything runs.
	perimeter *perimeter
}

// NewServer returns a Server over d with cfg's defaults filled in.
func NewServer(d Deps, cfg Config) *Server {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		d:       d,
		cfg:     cfg.withDefaults(),
		log:     d.Logger,
		mux:     http.NewServeMux(),
		hub:     newHub(),
		metrics: &counters{},
		started: time.Now(),
	}
	s.perimeter = newPerimeter(s.cfg.AllowedHosts)
	s.routes()
	return s
}

func (s *Server) routes() {
	h := func(pattern string, fn func(w http.ResponseWriter, r *http.Request) error) {
		s.patterns = append(s.patterns, pattern)
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := fn(w, r); err != nil {
				s.fail(w, r, err)
			}
		})
	}
	h("POST /v1/messages", s.postMessages)
	h("POST /v1/episodes", s.postEpisode)
	h("POST /v1/sessions/{id}/turns", s.postTurns)
	h("POST /v1/sessions/{id}/finalize", s.postFinalize)
	h("POST /v1/sessions/{id}/end", s.postEnd)
	h("POST /v1/sessions/{id}/extract", s.postExtract)
	h("GET /v1/episodes/{id}", s.getEpisode)
	h("GET /v1/episodes/{id}/traces", s.getEpisodeTraces)
	h("GET /v1/traces", s.getTraces)
	h("GET /v1/traces/{id}", s.getTrace)
	h("GET /v1/memories", s.getMemories)
	h("GET /v1/memories/{id}", s.getMemory)
	h("POST /v1/memories", s.postMemory)
	h("POST /v1/memories/forget", s.postForget)
	h("PATCH /v1/memories/{id}", s.patchMemory)
	h("DELETE /v1/memories/{id}", s.deleteMemory)
	h("GET /v1/search", s.getSearch)
	h("GET /v1/recall", s.getRecall)
	h("GET /v1/status", s.getStatus)
	h("GET /v1/events", s.getEvents)
	h("GET /healthz", s.getHealth)
	h("GET /metrics", s.getMetrics)
	h("GET /{$}", s.getPage)
	if s.d.MCP != nil {
		s.patterns = append(s.patterns, mcpPath)
		s.mux.HandleFunc(mcpPath, s.serveMCP)
	}
	s.mux.HandleFunc("/", s.notFound)
}

// ServeHTTP checks the token, bounds the request's time (the event stream
// excepted) and dispatches it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// A bug in a handler answers 500 instead of dropping the connection.
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("handler panicked", "method", r.Method, "path", r.URL.Path, "panic", v)
			writeErrorStatus(w, http.StatusInternalServerError, CodeInternal, "internal error")
		}
	}()
	if !s.guard(w, r) {
		return
	}
	if s.d.Viewer != nil && viewerPath(r.URL.Path) {
		s.serveViewer(w, r)
		return
	}
	if r.URL.Path != "/healthz" {
		p, err := s.authenticate(r)
		if err == nil {
			err = p.authorize(r)
		}
		if err != nil {
			if errors.Is(err, imprint.ErrUnauthorized) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="imprint"`)
			}
			s.fail(w, r, err)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), principalCtxKey{}, p))
	}
	if r.URL.Path != "/v1/events" && !mcpStream(r) {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		// The context does not stop a body read: a client that stalls
		// mid-body would hold the handler forever. The connection's read
		// deadline does; the write deadline leaves room for the error reply
		// of a request that ran out of time. Writers that cannot take
		// deadlines (tests' recorders) are left as they are.
		rc := http.NewResponseController(w)
		now := time.Now()
		_ = rc.SetReadDeadline(now.Add(s.cfg.RequestTimeout))
		_ = rc.SetWriteDeadline(now.Add(s.cfg.RequestTimeout + writeSlack))
	}
	s.mux.ServeHTTP(w, r)
}

// notFound answers paths no route matches: 405 with Allow when the path
// exists for other methods, else 404, both as JSON errors.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		if allow[0] == http.MethodGet {
			allow = slices.Insert(allow, 1, http.MethodHead)
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeErrorStatus(w, http.StatusMethodNotAllowed, CodeInvalid,
			"method "+r.Method+" is not allowed on "+r.URL.Path+" (allowed: "+strings.Join(allow, ", ")+")")
		return
	}
	s.fail(w, r, imprint.NotFoundf("no endpoint %s %s", r.Method, r.URL.Path))
}

// writeJSON writes v with the status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}

// wake asks the scheduler, when it can, to look for new work now.
func (s *Server) wake() {
	if wk, ok := s.d.Jobs.(waker); ok {
		wk.Wake()
	}
}

// Close ends the event streams; requests in flight otherwise continue.
func (s *Server) Close() { s.hub.close() }

func (s *Server) getHealth(w http.ResponseWriter, _ *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
