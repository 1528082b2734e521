package anthropic_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/anthropic"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

func newProvider(t *testing.T, srv *llmtest.Server, cfg anthropic.Config) *anthropic.Provider {
	t.Helper()
	cfg.BaseURL = srv.URL
	cfg.HTTPClient = srv.Client()
	if cfg.Model == "" {
		cfg.Model = "claude-test"
	}
	return anthropic.New(cfg)
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
	jsonSystem, _ := json.Marshal("You extract memories.\n\n" + anthropic.JSONInstruction)
	onlyInstruction, _ := json.Marshal(anthropic.JSONInstruction)
	tests := []struct {
		name      string
		cfg       anthropic.Config
		req       imprint.LLMRequest
		want      string
		wantJSONM bool
	}{
		{
			name: "json op appends the instruction to the system prompt",
			req: imprint.LLMRequest{
				Op: "extract.l1.v1", System: "You extract memories.", JSON: true, MaxTokens: 800, Temperature: 0.2,
				Messages: []imprint.ChatMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "{}"}, {Role: "user", Content: "fix it"}},
			},
			want: `{"model": "claude-test", "temperature": 0.2, "max_tokens": 800, "system": ` + string(jsonSystem) + `,
				"messages": [
					{"role": "user", "content": "hi"},
					{"role": "assistant", "content": "{}"},
					{"role": "user", "content": "fix it"}]}`,
			wantJSONM: true,
		},
		{
			name:      "json op without system",
			req:       imprint.LLMRequest{Op: "op", JSON: true, Messages: []imprint.ChatMessage{{Role: "user", Content: "x"}}},
			want:      `{"model": "claude-test", "temperature": 0, "max_tokens": 1024, "system": ` + string(onlyInstruction) + `, "messages": [{"role": "user", "content": "x"}]}`,
			wantJSONM: true,
		},
		{
			name: "text op uses the configured max tokens and omits an empty system",
			cfg:  anthropic.Config{MaxTokens: 333},
			req:  imprint.LLMRequest{Op: "op", Messages: []imprint.ChatMessage{{Role: "user", Content: "x"}}},
			want: `{"model": "claude-test", "temperature": 0, "max_tokens": 333, "messages": [{"role": "user", "content": "x"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Script(tt.req.Op, llmtest.Text("ok"))
			if _, err := newProvider(t, srv, tt.cfg).Do(t.Context(), tt.req); err != nil {
				t.Fatal(err)
			}
			got := srv.Requests()[0]
			if diff := cmp.Diff(decode(t, []byte(tt.want)), decode(t, got.Body)); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
			if got.Format != llmtest.FormatAnthropic || got.JSONMode != tt.wantJSONM {
				t.Errorf("format %q JSON mode %v, want anthropic %v", got.Format, got.JSONMode, tt.wantJSONM)
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script("extract.dedup.v1", llmtest.Text("ok"))
	req := imprint.LLMRequest{Op: "extract.dedup.v1", Messages: []imprint.ChatMessage{{Role: "user", Content: "x"}}}
	if _, err := newProvider(t, srv, anthropic.Config{APIKey: "ak-test"}).Do(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	for k, want := range map[string]string{
		"X-Api-Key":         "ak-test",
		"Anthropic-Version": "2023-06-01",
		"X-Imprint-Op":      "extract.dedup.v1",
		"Content-Type":      "application/json",
		"Authorization":     "",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestResponse(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script("op", llmtest.Reply{Text: "hello there", PromptTokens: 12, CompletionTokens: 2})
	srv.Script("multi", llmtest.Reply{RawBody: `{"type": "message", "model": "claude-x", "content": [
		{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "part one, "}, {"type": "text", "text": "part two"}]}`})
	p := newProvider(t, srv, anthropic.Config{})
	msgs := []imprint.ChatMessage{{Role: "user", Content: "x"}}
	got, err := p.Do(t.Context(), imprint.LLMRequest{Op: "op", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(imprint.LLMResponse{Text: "hello there", Model: "claude-test", PromptTokens: 12, CompletionTokens: 2}, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	got, err = p.Do(t.Context(), imprint.LLMRequest{Op: "multi", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(imprint.LLMResponse{Text: "part one, part two", Model: "claude-x"}, got); diff != "" {
		t.Errorf("response without usage (-want +got):\n%s", diff)
	}
	if p.Name() != "anthropic" || p.Model() != "claude-test" {
		t.Errorf("Name/Model = %q/%q", p.Name(), p.Model())
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		reply     llmtest.Reply
		wantHTTP  *llm.HTTPError
		wantInMsg string
	}{
		{"429 with Retry-After", llmtest.Fault429("3"), &llm.HTTPError{Status: 429, RetryAfter: 3 * time.Second}, "rate limited"},
		{"529 overloaded", llmtest.Status(529), &llm.HTTPError{Status: 529}, "http 529"},
		{"403", llmtest.Status(403), &llm.HTTPError{Status: 403}, "Forbidden"},
		{"malformed 200 body", llmtest.Malformed(), nil, "unusable reply"},
		{"200 error body", llmtest.Reply{RawBody: `{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`}, nil, "Overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Script("op", tt.reply)
			_, err := newProvider(t, srv, anthropic.Config{}).Do(t.Context(), imprint.LLMRequest{Op: "op", Messages: []imprint.ChatMessage{{Role: "user", Content: "x"}}})
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
