package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/imprint-dev/imprint"
)

// Provider makes one HTTP attempt at a chat completion. It neither retries
// nor limits concurrency; Client does both. A non-2xx reply is returned as
// an *HTTPError; a transport failure, a cancelled context or an unreadable
// 2xx body as any other error. A provider that reports no usage leaves the
// token counts of the response at zero.
type Provider interface {
	// Do sends req once and returns the model's reply.
	Do(ctx context.Context, req imprint.LLMRequest) (imprint.LLMResponse, error)
	// Name names the provider ("openai", "anthropic").
	Name() string
	// Model names the model requests go to.
	Model() string
}

// HTTPError is a non-2xx reply from a provider.
type HTTPError struct {
	// Status is the HTTP status code.
	Status int
	// RetryAfter is the wait the provider asked for (Retry-After or
	// retry-after-ms), zero when it gave none.
	RetryAfter time.Duration
	// Body is the start of the response body, for the error message.
	Body string
}

// Error returns the status and the start of the body.
func (e *HTTPError) Error() string {
	body := strings.TrimSpace(e.Body)
	if body == "" {
		return fmt.Sprintf("http %d %s", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("http %d %s: %s", e.Status, http.StatusText(e.Status), body)
}

// maxErrorBody bounds the part of an error body kept in an HTTPError.
const maxErrorBody = 2048

// maxResponseBody bounds the body read from a successful reply.
const maxResponseBody = 32 << 20

// ParseRetryAfter reads the wait a provider asked for from the headers of
// its reply: retry-after-ms (milliseconds, sent by some OpenAI-compatible
// servers) or Retry-After (delay in seconds or an HTTP date, relative to
// now). It returns zero when neither is present or valid.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || s > 1e6 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// PostJSON sends body as JSON to url with the given headers and returns the
// body of a 2xx reply. A non-2xx reply is an *HTTPError. Provider adapters
// share it so that they map statuses the same way.
func PostJSON(ctx context.Context, hc *http.Client, url string, header http.Header, body any) ([]byte, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, &HTTPError{
			Status:     resp.StatusCode,
			RetryAfter: ParseRetryAfter(resp.Header, time.Now()),
			Body:       string(b),
		}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	return b, nil
}
