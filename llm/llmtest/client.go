package llmtest

import (
	"context"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/anthropic"
	"github.com/imprint-dev/imprint/llm/openai"
)

// Names the test clients use.
const (
	TestAPIKey = "llmtest-key"
	TestModel  = "llmtest-model"
)

// NewClient returns an llm.Client talking to srv in format (FormatOpenAI or
// FormatAnthropic) with test-sized settings: a 5s attempt timeout, a 1ms
// backoff, waits (Retry-After included) shortened to at most 1ms, model
// TestModel and key TestAPIKey. opts adjust the options after that.
func NewClient(tb testing.TB, srv *Server, format string, opts ...func(*llm.Options)) *llm.Client {
	tb.Helper()
	var p llm.Provider
	switch format {
	case FormatOpenAI:
		p = openai.New(openai.Config{BaseURL: srv.URL + "/v1", APIKey: TestAPIKey, Model: TestModel, HTTPClient: srv.Client()})
	case FormatAnthropic:
		p = anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: TestAPIKey, Model: TestModel, HTTPClient: srv.Client()})
	default:
		tb.Fatalf("llmtest.NewClient: unknown format %q (want %q or %q)", format, FormatOpenAI, FormatAnthropic)
		return nil
	}
	o := llm.Options{
		Timeout:     5 * time.Second,
		BaseBackoff: time.Millisecond,
		Sleep:       shortSleep,
	}
	for _, f := range opts {
		f(&o)
	}
	return llm.New(p, o)
}

// shortSleep waits at most a millisecond, so scripted Retry-After values do
// not slow tests down.
func shortSleep(ctx context.Context, d time.Duration) error {
	d = min(d, time.Millisecond)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
