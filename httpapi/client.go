package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	imprint "github.com/imprint-dev/imprint"
)

// Client talks to a running imprint server. Its methods return the same
// Go types as the library, and errors of the same kinds: a server error
// body with code invalid, not_found, unauthorized, conflict or too_large is
// an *Error that matches imprint.ErrInvalid, ErrNotFound, ErrUnauthorized,
// ErrConflict or ErrTooLarge with errors.Is; a server that cannot be
// reached is ErrUnavailable.
type Client struct {
	// BaseURL is the server's root, e.g. "http://127.0.0.1:8420".
	BaseURL string
	// Token is sent as "Authorization: Bearer <token>" when set.
	Token string
	// HTTP makes the requests; nil uses http.DefaultClient.
	HTTP *http.Client
	// MaxTurnsPerRequest is the most messages or turns sent in one request
	// (default DefaultMaxTurnsPerRequest, the server's default). Longer
	// posts are split into consecutive requests; a server with a lower
	// limit answers 413 and the client halves its chunks.
	MaxTurnsPerRequest int
	// Found, when set, says how the service was found (e.g. "the imprint
	// serve that holds the data dir"): an unauthorized answer then says so
	// and how to give a token.
	Found string
}

// hint adds to an unauthorized error why this service was asked and how to
// give its token, when the caller did not name the service (c.Found).
func (c *Client) hint(err error) error {
	if err != nil && c.Found != "" && errors.Is(err, imprint.ErrUnauthorized) {
		return fmt.Errorf("%w (%s at %s: give its token with --token or IMPRINT_API_TOKEN)", err, c.Found, c.BaseURL)
	}
	return err
}

// Error is an error answer of the server.
type Error struct {
	Status  int
	Code    string
	Message string
}

// Error returns the server's message.
func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("server answered %d %s", e.Status, e.Code)
	}
	return e.Message
}

// Is matches the error kind of the code.
func (e *Error) Is(target error) bool {
	k := kindOf(e.Code)
	return k != nil && k == target
}

// do sends a request with an optional JSON body and decodes a 2xx reply
// into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body, out any) error {
	u := strings.TrimRight(c.BaseURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return imprint.Invalidf("server URL %q: %v", c.BaseURL, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.send(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w: %v", method, path, imprint.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read reply: %w: %v", method, path, imprint.ErrUnavailable, err)
	}
	if resp.StatusCode/100 != 2 {
		return c.hint(replyError(resp.StatusCode, data))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode reply: %w", method, path, err)
	}
	return nil
}

// replyError turns an error reply into an *Error, guessing the code from
// the status when the body is not an error object.
func replyError(status int, data []byte) error {
	var eb errorBody
	if json.Unmarshal(data, &eb) == nil && eb.Error.Code != "" {
		return &Error{Status: status, Code: eb.Error.Code, Message: eb.Error.Message}
	}
	code := CodeInternal
	switch status {
	case http.StatusBadRequest, http.StatusMethodNotAllowed:
		code = CodeInvalid
	case http.StatusNotFound:
		code = CodeNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		code = CodeUnauthorized
	case http.StatusConflict:
		code = CodeConflict
	case http.StatusRequestEntityTooLarge:
		code = CodeTooLarge
	}
	msg := strings.TrimSpace(string(data))
	if len(msg) > 200 {
		msg = msg[:200]
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &Error{Status: status, Code: code, Message: fmt.Sprintf("server answered %d: %s", status, msg)}
}

// scopeQuery is the scope as query parameters.
func scopeQuery(scope imprint.Scope) url.Values {
	scope = scope.WithDefaults()
	return url.Values{"tenant": {scope.Tenant}, "user": {scope.User}, "agent": {scope.Agent}}
}

// setWorkspace sets the workspace query parameter when ws is given.
func setWorkspace(q url.Values, ws string) {
	if ws != "" {
		q.Set("workspace", ws)
	}
}

func sessionURL(sessionID, action string) string {
	return "/v1/sessions/" + url.PathEscape(sessionID) + "/" + action
}

// messagesIn is the §4.2 body the client sends.
type messagesIn struct {
	SessionID string            `json:"session_id"`
	Scope     imprint.Scope     `json:"scope"`
	Messages  []imprint.Message `json:"messages"`
}

// Record posts L0 messages of a session (POST /v1/messages), in order, in
// requests of at most MaxTurnsPerRequest messages, and returns their
// results merged. After a failed request the messages of the requests
// before it stay recorded; recording them again skips them.
func (c *Client) Record(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) (imprint.RecordResult, error) {
	var res imprint.RecordResult
	if msgs == nil {
		msgs = []imprint.Message{}
	}
	err := chunked(ctx, c, msgs, func(ctx context.Context, part []imprint.Message) error {
		var one imprint.RecordResult
		in := messagesIn{SessionID: sessionID, Scope: scope.WithDefaults(), Messages: part}
		if err := c.do(ctx, http.MethodPost, "/v1/messages", nil, in, &one); err != nil {
			return err
		}
		res = mergeResults(res, one)
		return nil
	})
	return res, err
}

// mergeResults adds the result of a later request of the same post to res.
func mergeResults(res, one imprint.RecordResult) imprint.RecordResult {
	if res.SessionID == "" {
		return one
	}
	res.RecordedCount += one.RecordedCount
	res.MessageIDs = append(res.MessageIDs, one.MessageIDs...)
	res.FilteredMessages = append(res.FilteredMessages, one.FilteredMessages...)
	res.Skipped = append(res.Skipped, one.Skipped...)
	res.VectorsWritten += one.VectorsWritten
	res.SchedulerNotified = res.SchedulerNotified || one.SchedulerNotified
	return res
}

// SubmitEpisode posts a complete episode for capture in the background
// (POST /v1/episodes) and returns its id, derived by the server when ep
// has none. ErrConflict when the id belongs to another scope. An episode
// of more than MaxTurnsPerRequest turns is one request no server takes:
// it is posted as consecutive episodes (EpisodeParts), each captured on
// its own, and the id returned is the first's.
func (c *Client) SubmitEpisode(ctx context.Context, ep imprint.Episode) (string, error) {
	ep.Scope = ep.Scope.WithDefaults()
	n := c.MaxTurnsPerRequest
	if n <= 0 {
		n = DefaultMaxTurnsPerRequest
	}
	first := ""
	for i, part := range EpisodeParts(ep, n) {
		var out episodeIDBody
		if err := c.do(ctx, http.MethodPost, "/v1/episodes", nil, part, &out); err != nil {
			return first, err
		}
		if i == 0 {
			first = out.EpisodeID
		}
	}
	return first, nil
}

// EpisodeParts splits ep into consecutive episodes of at most n turns,
// each cut before a user turn where one is in reach so that a step (a user
// turn and what answers it) stays whole. Part k > 1 of an episode with an
// id has the id "<id>~<k>"; without an id the server derives each part's.
// An episode of at most n turns is returned as it is.
func EpisodeParts(ep imprint.Episode, n int) []imprint.Episode {
	if n <= 0 || len(ep.Turns) <= n {
		return []imprint.Episode{ep}
	}
	var parts []imprint.Episode
	turns := ep.Turns
	for len(turns) > 0 {
		end := min(n, len(turns))
		if end < len(turns) {
			for i := end; i > 0; i-- {
				if turns[i].Role == imprint.RoleUser {
					end = i
					break
				}
			}
		}
		part := ep
		part.Turns = turns[:end]
		if k := len(parts) + 1; k > 1 && ep.ID != "" {
			part.ID = ep.ID + "~" + strconv.Itoa(k)
		}
		parts = append(parts, part)
		turns = turns[end:]
	}
	return parts
}

// AppendTurns appends turns to the session's open episode and returns its
// id and total number of turns (POST /v1/sessions/{id}/turns), in requests
// of at most MaxTurnsPerRequest turns, in order.
func (c *Client) AppendTurns(ctx context.Context, scope imprint.Scope, sessionID string, turns []imprint.Turn) (episodeID string, turnCount int, err error) {
	err = chunked(ctx, c, turns, func(ctx context.Context, part []imprint.Turn) error {
		in := struct {
			Scope imprint.Scope  `json:"scope"`
			Turns []imprint.Turn `json:"turns"`
		}{scope.WithDefaults(), part}
		var out turnsBody
		if err := c.do(ctx, http.MethodPost, sessionURL(sessionID, "turns"), nil, in, &out); err != nil {
			return err
		}
		episodeID, turnCount = out.EpisodeID, out.TurnCount
		return nil
	})
	return episodeID, turnCount, err
}

// Finalize closes the session's open episode and returns its id
// (POST /v1/sessions/{id}/finalize); ErrNotFound when none is open.
func (c *Client) Finalize(ctx context.Context, scope imprint.Scope, sessionID string, closedBy imprint.ClosedBy) (string, error) {
	in := struct {
		Scope    imprint.Scope    `json:"scope"`
		ClosedBy imprint.ClosedBy `json:"closed_by,omitempty"`
	}{scope.WithDefaults(), closedBy}
	var out episodeIDBody
	err := c.do(ctx, http.MethodPost, sessionURL(sessionID, "finalize"), nil, in, &out)
	return out.EpisodeID, err
}

// End finalizes the session's open episode, if any, and forces extraction
// of its pending messages (POST /v1/sessions/{id}/end). It returns the
// closed episode's id (nil when none was open) and the pending count.
func (c *Client) End(ctx context.Context, scope imprint.Scope, sessionID string) (*string, int, error) {
	in := struct {
		Scope imprint.Scope `json:"scope"`
	}{scope.WithDefaults()}
	var out endBody
	err := c.do(ctx, http.MethodPost, sessionURL(sessionID, "end"), nil, in, &out)
	return out.EpisodeID, out.PendingMessages, err
}

// Extract asks the server to extract the session's pending messages in the
// background (POST /v1/sessions/{id}/extract) and returns how many are
// pending; ErrNotFound when the session is not in scope.
func (c *Client) Extract(ctx context.Context, scope imprint.Scope, sessionID string) (int, error) {
	in := struct {
		Scope imprint.Scope `json:"scope"`
	}{scope.WithDefaults()}
	var out extractBody
	err := c.do(ctx, http.MethodPost, sessionURL(sessionID, "extract"), nil, in, &out)
	return out.PendingMessages, err
}

// Episode reads an episode (GET /v1/episodes/{id}).
func (c *Client) Episode(ctx context.Context, scope imprint.Scope, id string) (imprint.Episode, error) {
	var ep imprint.Episode
	err := c.do(ctx, http.MethodGet, "/v1/episodes/"+url.PathEscape(id), scopeQuery(scope), nil, &ep)
	return ep, err
}

// EpisodeTraces lists an episode's traces in step order
// (GET /v1/episodes/{id}/traces); ErrNotFound when the episode is not in
// scope.
func (c *Client) EpisodeTraces(ctx context.Context, scope imprint.Scope, episodeID string) ([]imprint.Trace, error) {
	var out tracesBody
	err := c.do(ctx, http.MethodGet, "/v1/episodes/"+url.PathEscape(episodeID)+"/traces", scopeQuery(scope), nil, &out)
	return out.Traces, err
}

// Traces lists the scope's traces in step order, filtered as f
// (GET /v1/traces).
func (c *Client) Traces(ctx context.Context, scope imprint.Scope, f imprint.TraceFilter) ([]imprint.Trace, error) {
	q := scopeQuery(scope)
	if f.EpisodeID != "" {
		q.Set("episode", f.EpisodeID)
	}
	if f.SessionID != "" {
		q.Set("session", f.SessionID)
	}
	setWorkspace(q, f.Workspace)
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	} else if f.Limit < 0 {
		q.Set("limit", "0") // all
	}
	var out tracesBody
	err := c.do(ctx, http.MethodGet, "/v1/traces", q, nil, &out)
	return out.Traces, err
}

// Trace reads a trace (GET /v1/traces/{id}).
func (c *Client) Trace(ctx context.Context, scope imprint.Scope, id string) (imprint.Trace, error) {
	var t imprint.Trace
	err := c.do(ctx, http.MethodGet, "/v1/traces/"+url.PathEscape(id), scopeQuery(scope), nil, &t)
	return t, err
}

// Memories lists memories newest first (GET /v1/memories).
func (c *Client) Memories(ctx context.Context, scope imprint.Scope, f imprint.MemoryFilter) ([]imprint.Memory, error) {
	q := scopeQuery(scope)
	if f.SessionID != "" {
		q.Set("session", f.SessionID)
	}
	if f.Type != "" {
		q.Set("type", string(f.Type))
	}
	setWorkspace(q, f.Workspace)
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	} else if f.Limit < 0 {
		q.Set("limit", "0") // all
	}
	if f.AllVersions {
		q.Set("all_versions", "true")
	}
	var out memoriesBody
	err := c.do(ctx, http.MethodGet, "/v1/memories", q, nil, &out)
	return out.Memories, err
}

// Memory reads a memory with its history (GET /v1/memories/{id}).
func (c *Client) Memory(ctx context.Context, scope imprint.Scope, id string) (MemoryWithHistory, error) {
	var m MemoryWithHistory
	err := c.do(ctx, http.MethodGet, "/v1/memories/"+url.PathEscape(id), scopeQuery(scope), nil, &m)
	return m, err
}

// Search runs a hybrid search (GET /v1/search). Kinds of one kind search
// that kind; none or several search all kinds.
func (c *Client) Search(ctx context.Context, q imprint.SearchQuery) ([]imprint.Hit, error) {
	v := scopeQuery(q.Scope)
	v.Set("q", q.Text)
	if len(q.Kinds) == 1 {
		v.Set("kind", string(q.Kinds[0]))
	}
	if q.SessionID != "" {
		v.Set("session", q.SessionID)
	}
	setWorkspace(v, q.Workspace)
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out hitsBody
	err := c.do(ctx, http.MethodGet, "/v1/search", v, nil, &out)
	return out.Hits, err
}

// Recall returns the context block for q (GET /v1/recall).
func (c *Client) Recall(ctx context.Context, q imprint.RecallQuery) (imprint.RecallResult, error) {
	v := scopeQuery(q.Scope)
	v.Set("q", q.Text)
	if q.SessionID != "" {
		v.Set("session", q.SessionID)
	}
	setWorkspace(v, q.Workspace)
	if q.BudgetTokens > 0 {
		v.Set("budget_tokens", strconv.Itoa(q.BudgetTokens))
	}
	if q.Persona {
		v.Set("persona", "true")
	}
	var out imprint.RecallResult
	err := c.do(ctx, http.MethodGet, "/v1/recall", v, nil, &out)
	return out, err
}

// Status reads the scope's status (GET /v1/status).
func (c *Client) Status(ctx context.Context, scope imprint.Scope) (Status, error) {
	var st Status
	err := c.do(ctx, http.MethodGet, "/v1/status", scopeQuery(scope), nil, &st)
	return st, err
}

// Health checks that the server is up (GET /healthz).
func (c *Client) Health(ctx context.Context) error {
	var out struct {
		Status string `json:"status"`
	}
	if err := c.do(ctx, http.MethodGet, "/healthz", nil, nil, &out); err != nil {
		return err
	}
	if out.Status != "ok" {
		return fmt.Errorf("server health is %q: %w", out.Status, imprint.ErrUnavailable)
	}
	return nil
}

// Event is one server-sent event.
type Event struct {
	Name string
	Data json.RawMessage
}

// Events streams the scope's events (GET /v1/events), calling fn for each
// until ctx ends, the server closes the stream (nil), or fn returns an
// error (returned). The request is not bounded by the client's timeout
// beyond what ctx says.
func (c *Client) Events(ctx context.Context, scope imprint.Scope, fn func(Event) error) error {
	u := strings.TrimRight(c.BaseURL, "/") + "/v1/events?" + scopeQuery(scope).Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return imprint.Invalidf("server URL %q: %v", c.BaseURL, err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.send(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("GET /v1/events: %w: %v", imprint.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return c.hint(replyError(resp.StatusCode, data))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var ev Event
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Name != "" || data != nil {
				if ev.Name == "" {
					ev.Name = "message"
				}
				ev.Data = json.RawMessage(data)
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, data = Event{}, nil
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			ev.Name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			d := strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, d...)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read events: %w: %v", imprint.ErrUnavailable, err)
	}
	return nil
}

// send adds the bearer token, if any, to req and sends it with c.HTTP
// (http.DefaultClient when nil).
func (c *Client) send(req *http.Request) (*http.Response, error) {
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	return hc.Do(req)
}

// EventStream follows a server's event stream for one scope. Events
// published after OpenEvents returns are seen. It owns the goroutine
// reading the stream: Close stops it and waits for it.
type EventStream struct {
	events chan Event
	errc   chan error
	cancel context.CancelFunc
	done   chan struct{}
}

// OpenEvents subscribes to the scope's events and returns once the server
// has registered the stream (its response headers arrived). The stream is
// not bounded by the client's request timeout, only by ctx.
func (c *Client) OpenEvents(ctx context.Context, scope imprint.Scope) (*EventStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	ready := make(chan struct{})
	var once sync.Once
	ec := *c
	base := http.DefaultTransport
	if c.HTTP != nil && c.HTTP.Transport != nil {
		base = c.HTTP.Transport
	}
	ec.HTTP = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(r)
		if err == nil {
			once.Do(func() { close(ready) })
		}
		return resp, err
	})}
	s := &EventStream{events: make(chan Event, 256), errc: make(chan error, 1), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		err := ec.Events(ctx, scope, func(e Event) error {
			select {
			case s.events <- e:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err == nil {
			err = fmt.Errorf("the server closed the event stream: %w", imprint.ErrUnavailable)
		}
		s.errc <- err
	}()
	select {
	case <-ready:
		return s, nil
	case err := <-s.errc:
		s.Close()
		return nil, err
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Next returns the next event, or an error when the stream or ctx ends.
func (s *EventStream) Next(ctx context.Context) (Event, error) {
	select {
	case e := <-s.events:
		return e, nil
	case err := <-s.errc:
		s.errc <- err
		return Event{}, err
	case <-ctx.Done():
		return Event{}, fmt.Errorf("waiting for the server: %w", ctx.Err())
	}
}

// Close stops the stream and waits for its reader.
func (s *EventStream) Close() {
	s.cancel()
	<-s.done
}

// CaptureEpisodes submits the episodes (already prepared, ids set) and
// calls fn with the capture result of each (the JSON of a capture result,
// CONTRACTS §5.1), in the order of eps, as the service reports them on the
// event stream. A capture that failed on the server ends it with an error
// naming the episode; so does an error of fn.
func (c *Client) CaptureEpisodes(ctx context.Context, eps []imprint.Episode, fn func(result json.RawMessage) error) error {
	streams := map[imprint.Scope]*EventStream{}
	defer func() {
		for _, s := range streams {
			s.Close()
		}
	}()
	for _, ep := range eps {
		if streams[ep.Scope] != nil {
			continue
		}
		s, err := c.OpenEvents(ctx, ep.Scope)
		if err != nil {
			return fmt.Errorf("follow capture: %w", err)
		}
		streams[ep.Scope] = s
	}
	for _, ep := range eps {
		if _, err := c.SubmitEpisode(ctx, ep); err != nil {
			return fmt.Errorf("submit episode %s: %w", ep.ID, err)
		}
	}
	outcomes := map[string]captureOutcome{}
	for _, ep := range eps {
		res, err := waitCapture(ctx, streams[ep.Scope], ep.ID, outcomes)
		if err != nil {
			return err
		}
		if err := fn(res); err != nil {
			return err
		}
	}
	return nil
}

// captureOutcome is what the service reported for one episode.
type captureOutcome struct {
	res json.RawMessage
	err error
}

// waitCapture reads events until the capture of episodeID is done or
// failed, keeping the outcomes of other episodes in seen.
func waitCapture(ctx context.Context, s *EventStream, episodeID string, seen map[string]captureOutcome) (json.RawMessage, error) {
	for {
		if o, ok := seen[episodeID]; ok {
			return o.res, o.err
		}
		e, err := s.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("capture of %s: %w", episodeID, err)
		}
		switch e.Name {
		case imprint.EventCaptureDone:
			var d struct {
				Result json.RawMessage `json:"result"`
			}
			var id struct {
				EpisodeID string `json:"episode_id"`
			}
			if json.Unmarshal(e.Data, &d) == nil && json.Unmarshal(d.Result, &id) == nil {
				seen[id.EpisodeID] = captureOutcome{res: d.Result}
			}
		case imprint.EventCaptureFailed:
			var d struct {
				EpisodeID string `json:"episode_id"`
				Error     struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(e.Data, &d) == nil {
				seen[d.EpisodeID] = captureOutcome{err: fmt.Errorf("capture of %s failed on the server (%s): %s", d.EpisodeID, d.Error.Code, d.Error.Message)}
			}
		}
	}
}

// PendingSessions returns the sessions of scope with messages pending
// extraction.
func (c *Client) PendingSessions(ctx context.Context, scope imprint.Scope) ([]string, error) {
	st, err := c.Status(ctx, scope)
	if err != nil {
		return nil, err
	}
	var sessions []string
	for _, s := range st.Sessions {
		if s.PendingMessages > 0 {
			sessions = append(sessions, s.SessionID)
		}
	}
	return sessions, nil
}

// ExtractSession asks the service to extract one session and calls fn with
// each window's result (the JSON of an extraction result) as the service
// reports it on s, until the windows have consumed the messages that were
// pending when it asked. A window that failed on the server is passed to
// fn with success false; an error of fn ends it. ErrNotFound for a session
// the service does not know.
func (c *Client) ExtractSession(ctx context.Context, s *EventStream, scope imprint.Scope, sessionID string, fn func(result json.RawMessage, success bool) error) error {
	pending, err := c.Extract(ctx, scope, sessionID)
	if err != nil {
		return err
	}
	for pending > 0 {
		e, err := s.Next(ctx)
		if err != nil {
			return fmt.Errorf("extract session %s: %w", sessionID, err)
		}
		if e.Name != EventExtractionDone && e.Name != EventExtractionFailed {
			continue
		}
		var res struct {
			Success    bool     `json:"success"`
			SessionID  string   `json:"session_id"`
			MessageIDs []string `json:"message_ids"`
		}
		if json.Unmarshal(e.Data, &res) != nil || res.SessionID != sessionID {
			continue
		}
		if len(res.MessageIDs) == 0 && res.Success {
			continue
		}
		if err := fn(e.Data, res.Success); err != nil {
			return err
		}
		// Count down by what the windows consumed rather than asking the
		// status again: the service may finish the next window before that
		// answer, and its result would go unreported.
		pending -= len(res.MessageIDs)
	}
	return nil
}
