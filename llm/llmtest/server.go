package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/anthropic"
)

// Wire formats, as in Request.Format.
const (
	FormatOpenAI    = "openai"
	FormatAnthropic = "anthropic"
)

// Request is one request the fake received.
type Request struct {
	// Op is the X-Imprint-Op header.
	Op string
	// Format is FormatOpenAI or FormatAnthropic, from the path.
	Format string
	// Model is the requested model.
	Model string
	// System is the system prompt (OpenAI system messages joined by a
	// blank line).
	System string
	// Messages are the non-system messages, in order.
	Messages []imprint.ChatMessage
	// User is the text of the last user message.
	User string
	// JSONMode is true for an OpenAI response_format json_object, or an
	// Anthropic system prompt carrying anthropic.JSONInstruction.
	JSONMode bool
	// MaxTokens and Temperature are as sent (zero when absent).
	MaxTokens   int
	Temperature float64
	// Header and Body are the raw request.
	Header http.Header
	Body   []byte
}

// Server is a fake LLM provider. Its methods are safe for concurrent use.
type Server struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:1234. OpenAI
	// clients use URL or URL+"/v1" as base URL; Anthropic clients use URL.
	URL string

	srv *httptest.Server

	mu          sync.Mutex
	scripts     map[string][]Reply
	handlers    map[string]func(Request) Reply
	requests    []Request
	inFlight    int
	maxInFlight int
}

// NewServer starts a fake provider, closed when the test ends.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{scripts: map[string][]Reply{}, handlers: map[string]func(Request) Reply{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	tb.Cleanup(s.srv.Close)
	return s
}

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Script sets the replies for op, used in order; the last one repeats. It
// replaces an earlier script or handler for op.
func (s *Server) Script(op string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.handlers, op)
	s.scripts[op] = append([]Reply(nil), replies...)
}

// Handle answers op with fn, called once per request (concurrently when
// requests are). It replaces an earlier script or handler for op.
func (s *Server) Handle(op string, fn func(r Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.scripts, op)
	s.handlers[op] = fn
}

// Requests returns every request received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequestsFor returns the requests received for op, in arrival order.
func (s *Server) RequestsFor(op string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.Op == op {
			out = append(out, r)
		}
	}
	return out
}

// InFlight returns the number of requests being answered now.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// MaxInFlight returns the largest number of requests answered at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// Reset forgets the scripts, handlers, recorded requests and in-flight
// maximum.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts = map[string][]Reply{}
	s.handlers = map[string]func(Request) Reply{}
	s.requests = nil
	s.maxInFlight = s.inFlight
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var format string
	switch r.URL.Path {
	case "/chat/completions", "/v1/chat/completions":
		format = FormatOpenAI
	case "/v1/messages":
		format = FormatAnthropic
	default:
		http.Error(w, "llmtest: unknown path "+r.URL.Path, http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "llmtest: method must be POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "llmtest: read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	req, perr := parseRequest(format, body)
	req.Op = r.Header.Get("X-Imprint-Op")
	req.Header = r.Header.Clone()
	req.Body = body

	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()

	switch {
	case perr != nil:
		writeError(w, format, Reply{Status: http.StatusBadRequest, Text: "llmtest: bad request body: " + perr.Error()})
		return
	case req.Op == "":
		writeError(w, format, Reply{Status: http.StatusBadRequest, Text: "llmtest: request has no X-Imprint-Op header"})
		return
	}

	reply, ok := s.next(req)
	if !ok {
		writeError(w, format, Reply{Status: http.StatusInternalServerError, Text: fmt.Sprintf("llmtest: no reply scripted for op %s (call Script or Handle)", req.Op)})
		return
	}
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
	}
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	if reply.RawBody != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, reply.RawBody)
		return
	}
	if status < 200 || status > 299 {
		writeError(w, format, reply)
		return
	}
	writeJSON(w, status, successBody(format, req, reply))
}

// next picks the reply for req.
func (s *Server) next(req Request) (Reply, bool) {
	s.mu.Lock()
	if fn, ok := s.handlers[req.Op]; ok {
		s.mu.Unlock()
		return fn(req), true
	}
	defer s.mu.Unlock()
	script := s.scripts[req.Op]
	if len(script) == 0 {
		return Reply{}, false
	}
	r := script[0]
	if len(script) > 1 {
		s.scripts[req.Op] = script[1:]
	}
	return r, true
}

type wireMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type wireRequest struct {
	Model          string        `json:"model"`
	System         any           `json:"system"`
	Messages       []wireMessage `json:"messages"`
	MaxTokens      int           `json:"max_tokens"`
	Temperature    float64       `json:"temperature"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

func parseRequest(format string, body []byte) (Request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{Format: format}, err
	}
	req := Request{Format: format, Model: w.Model, MaxTokens: w.MaxTokens, Temperature: w.Temperature}
	var system []string
	if s := contentText(w.System); s != "" {
		system = append(system, s)
	}
	for _, m := range w.Messages {
		text := contentText(m.Content)
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, text)
			continue
		}
		req.Messages = append(req.Messages, imprint.ChatMessage{Role: m.Role, Content: text})
		if m.Role == "user" {
			req.User = text
		}
	}
	req.System = strings.Join(system, "\n\n")
	switch format {
	case FormatOpenAI:
		req.JSONMode = w.ResponseFormat != nil && w.ResponseFormat.Type == "json_object"
	case FormatAnthropic:
		req.JSONMode = strings.Contains(req.System, anthropic.JSONInstruction)
	}
	return req, nil
}

// contentText reads a message content given as a string or as a list of
// content blocks with text.
func contentText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, part := range c {
			if m, ok := part.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					b.WriteString(t)
				}
			}
		}
		return b.String()
	}
	return ""
}

func successBody(format string, req Request, r Reply) map[string]any {
	prompt, completion := r.PromptTokens, r.CompletionTokens
	if prompt == 0 && completion == 0 {
		prompt = max(1, imprint.EstimateTokens(req.System))
		for _, m := range req.Messages {
			prompt += imprint.EstimateTokens(m.Content)
		}
		completion = max(1, imprint.EstimateTokens(r.Text))
	}
	model := req.Model
	if model == "" {
		model = "llmtest"
	}
	switch format {
	case FormatAnthropic:
		body := map[string]any{
			"id":          "msg_llmtest",
			"type":        "message",
			"role":        "assistant",
			"model":       model,
			"content":     []map[string]any{{"type": "text", "text": r.Text}},
			"stop_reason": "end_turn",
		}
		if !r.NoUsage {
			body["usage"] = map[string]int{"input_tokens": prompt, "output_tokens": completion}
		}
		return body
	default:
		body := map[string]any{
			"id":     "chatcmpl-llmtest",
			"object": "chat.completion",
			"model":  model,
			"choices": []map[string]any{{
				"index":         0,
				"message":       map[string]any{"role": "assistant", "content": r.Text},
				"finish_reason": "stop",
			}},
		}
		if !r.NoUsage {
			body["usage"] = map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
		}
		return body
	}
}

func writeError(w http.ResponseWriter, format string, r Reply) {
	status := r.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	msg := r.Text
	if msg == "" {
		msg = http.StatusText(status)
	}
	if format == FormatAnthropic {
		writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}})
		return
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "server_error"}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
