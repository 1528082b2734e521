package openai_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/llm/openai"
)

func newProvider(t *testing.T, srv *llmtest.Server, key string) *openai.Provider {
	t.Helper()
	return openai.New(openai.Config{BaseURL: srv.URL + "/v1/", APIKey: key, Model: "gpt-test", HTTPClient: srv.Client()})
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, b)
	}
	return m
}

func TestRequestBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  imprint.LLMRequest
		want string
	}{
		{
			name: "json op with system and history",
			req: imprint.LLMRequest{
				Op: "extract.l1.v1", System: "You extract memories.", JSON: true, MaxTokens: 800, Temperature: 0.2,
				Messages: []imprint.ChatMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "{}"}, {Role: "user", Content: "fix it"}},
			},
			want: `{"model": "gpt-test", "temperature": 0.2, "max_tokens": 800,
				"response_format": {"type": "json_object"},
				"messages": [
					{"role": "system", "content": "You extract memories."},
					{"role": "user", "content": "hi"},
					{"role": "assistant", "content": "{}"},
					{"role": "user", "content": "fix it"}]}`,
		},
		{
			name: "text op without system or max tokens",
			req:  imprint.LLMRequest{Op: "capture.reflection.synth.v1", Messages: []imprint.ChatMessage{{Role: "user", Content: "TASK: x"}}},
			want: `{"model": "gpt-test", "temperature": 0, "messages": [{"role": "user", "content": "TASK: x"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Script(tt.req.Op, llmtest.Text("ok"))
			if _, err := newProvider(t, srv, "sk-test").Do(t.Context(), tt.req); err != nil {
				t.Fatal(err)
			}
			got := srv.Requests()[0]
			if diff := cmp.Diff(decode(t, []byte(tt.want)), decode(t, got.Body)); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
			if got.Format != llmtest.FormatOpenAI || got.JSONMode != tt.req.JSON {
				t.Errorf("format %q JSON mode %v, want openai %v", got.Format, got.JSONMode, tt.req.JSON)
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, key, wantAuth string
	}{
		{"with key", "sk-test", "Bearer sk-test"},
		{"local server without key", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Script("capture.alpha.v1", llmtest.Text("ok"))
			req := imprint.LLMRequest{Op: "capture.alpha.v1", Messages: []imprint.ChatMessage{{Role: "user", Content: "x"}}}
			if _, err := newProvider(t, srv, tt.key).Do(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			h := srv.Requests()[0].Header
			if got := h.Get("Authorization"); got != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", got, tt.wantAuth)
			}
			if got := h.Get("X-Imprint-Op"); got != "capture.alpha.v1" {
				t.Errorf("X-Imprint-Op = %q", got)
			}
			if got := h.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type = %q", got)
			}
		})
	}
}

func TestResponse(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script("op", llmtest.Reply{Text: "hello there", PromptTokens: 12, CompletionTokens: 2})
	srv.Script("nousage", llmtest.Reply{Text: "hi", NoUsage: true})
	p := newProvider(t, srv, "k")
	got, err := p.Do(t.Context(), imprint.LLMRequest{Op: "op", Messages: []imprint.ChatMessage{{Role: "user", Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := imprint.LLMResponse{Text: "hello there", Model: "gpt-test", PromptTokens: 12, CompletionTokens: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	got, err = p.Do(t.Context(), imprint.LLMRequest{Op: "nousage", Messages: []imprint.ChatMessage{{Role: "user", Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got.PromptTokens != 0 || got.CompletionTokens != 0 || got.Text != "hi" {
		t.Errorf("response without usage = %+v, want zero counts", got)
	}
	if p.Name() != "openai" || p.Model() != "gpt-test" {
		t.Errorf("Name/Model = %q/%q", p.Name(), p.Model())
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		reply     llmtest.Reply
		wantHTTP  *llm.HTTPError // nil: not an HTTP error
		wantInMsg string
	}{
		{"429 with Retry-After", llmtest.Fault429("7"), &llm.HTTPError{Status: 429, RetryAfter: 7 * time.Second}, "rate limited"},
		{"500", llmtest.Fault500(), &llm.HTTPError{Status: 500}, "internal error"},
		{"401", llmtest.Status(401), &llm.HTTPError{Status: 401}, "Unauthorized"},
		{"malformed 200 body", llmtest.Malformed(), nil, "unusable reply"},
		{"200 without choices", llmtest.Reply{RawBody: `{"error": {"message": "upstream overloaded"}}`}, nil, "upstream overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Script("op", tt.reply)
			_, err := newProvider(t, srv, "k").Do(t.Context(), imprint.LLMRequest{Op: "op", Messages: []imprint.ChatMessage{{Role: "user", Content: "x"}}})
			if err == nil {
				t.Fatal("Do succeeded, want an error")
			}
			var he *llm.HTTPError
			isHTTP := errors.As(err, &he)
			if (tt.wantHTTP != nil) != isHTTP {
				t.Fatalf("error %v: HTTP error %v, want %v", err, isHTTP, tt.wantHTTP != nil)
			}
			if isHTTP && (he.Status != tt.wantHTTP.Status || he.RetryAfter != tt.wantHTTP.RetryAfter) {
				t.Errorf("HTTPError status %d retry-after %v, want %d %v", he.Status, he.RetryAfter, tt.wantHTTP.Status, tt.wantHTTP.RetryAfter)
			}
			if !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantInMsg)
			}
		})
	}
}

func TestDefaultBaseURL(t *testing.T) {
	t.Parallel()
	if openai.DefaultBaseURL != "https://api.openai.com/v1" {
		t.Errorf("DefaultBaseURL = %q", openai.DefaultBaseURL)
	}
}
