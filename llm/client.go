package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/imprint-dev/imprint"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultTimeout     = 45 * time.Second
	DefaultMaxRetries  = 3
	DefaultConcurrency = 4
	DefaultBaseBackoff = 500 * time.Millisecond
)

// Bounds on the wait between attempts.
const (
	// MaxRetryAfter caps a provider's Retry-After.
	MaxRetryAfter = 60 * time.Second
	// maxBackoff caps the exponential backoff before jitter.
	maxBackoff = 30 * time.Second
)

// Options configure a Client. The zero value of each field means its default.
type Options struct {
	// Timeout bounds each HTTP attempt (default 45s). A request's own
	// Timeout overrides it.
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt on 429,
	// 5xx, network errors and attempt timeouts (default 3; negative means
	// no retries).
	MaxRetries int
	// Concurrency caps the requests in flight through this Client at once
	// (default 4). Create one Client per process to make it process-wide.
	Concurrency int
	// Recorder receives every HTTP attempt; nil records nothing.
	Recorder imprint.CallRecorder
	// Redact is applied to the system prompt and every message before
	// sending; nil sends them unchanged.
	Redact func(string) string
	// Logger receives retry and recorder warnings; nil discards them.
	Logger *slog.Logger
	// BaseBackoff is the first backoff step (default 500ms); the n-th retry
	// waits a random duration up to BaseBackoff·2^(n-1), capped at 30s,
	// unless the provider sent Retry-After.
	BaseBackoff time.Duration
	// Budget, when set, is asked before every attempt; a refused request
	// fails with an *imprint.BudgetError and nothing is sent.
	Budget *Budget
	// Sleep waits d or until ctx is done; nil uses a timer. Tests replace it
	// to record the waits.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Client is an imprint.LLM over a Provider, adding timeouts, retries, a
// concurrency cap, redaction and call recording. It is safe for concurrent
// use.
type Client struct {
	p    Provider
	opts Options
	sem  chan struct{}
	log  *slog.Logger
}

var _ imprint.LLM = (*Client)(nil)

// New returns a Client sending requests through p.
func New(p Provider, o Options) *Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = DefaultBaseBackoff
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{p: p, opts: o, sem: make(chan struct{}, o.Concurrency), log: log}
}

// Provider names the provider requests go through.
func (c *Client) Provider() string { return c.p.Name() }

// Model names the model requests go to.
func (c *Client) Model() string { return c.p.Model() }

// Complete sends req, retrying transient failures. Token counts the provider
// did not report are estimated with imprint.EstimateTokens. Errors are of
// kind imprint.ErrLLMAuth (401/403, never retried), imprint.ErrLLMTimeout
// (the last attempt, or ctx, ran out of time) or imprint.ErrLLMUnavailable
// (retries exhausted, another non-2xx status, a network failure, a
// cancelled ctx); a request without Op is imprint.ErrInvalid. A request the
// budget refuses is an *imprint.BudgetError (kind imprint.ErrLLMBudget),
// never retried.
func (c *Client) Complete(ctx context.Context, req imprint.LLMRequest) (imprint.LLMResponse, error) {
	if req.Op == "" {
		return imprint.LLMResponse{}, imprint.Invalidf("llm request: op is required")
	}
	req = c.redact(req)
	timeout := c.opts.Timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	attempts := c.opts.MaxRetries + 1
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, req, attempt, timeout)
		if err == nil {
			return resp, nil
		}
		if errors.Is(err, imprint.ErrLLMBudget) {
			return imprint.LLMResponse{}, fmt.Errorf("llm %s: %w", req.Op, err)
		}
		f := classify(ctx, err)
		if !f.retry || attempt >= attempts {
			return imprint.LLMResponse{}, fmt.Errorf("llm %s: attempt %d of %d: %w: %w", req.Op, attempt, attempts, f.kind, err)
		}
		wait := c.backoff(attempt)
		if f.retryAfter > 0 {
			wait = min(f.retryAfter, MaxRetryAfter)
		}
		c.log.LogAttrs(ctx, slog.LevelWarn, "llm attempt failed, retrying",
			slog.String("op", req.Op), slog.String("provider", c.p.Name()),
			slog.Int("attempt", attempt), slog.Duration("wait", wait), slog.String("error", err.Error()))
		if serr := c.opts.Sleep(ctx, wait); serr != nil {
			return imprint.LLMResponse{}, fmt.Errorf("llm %s: waiting to retry after %v: %w: %w", req.Op, err, ctxKind(serr), serr)
		}
		// A retry finishes the request in flight (--max-llm-calls).
		ctx = imprint.Continuing(ctx)
	}
}

// attempt makes one HTTP attempt under the concurrency cap and records it.
func (c *Client) attempt(ctx context.Context, req imprint.LLMRequest, n int, timeout time.Duration) (imprint.LLMResponse, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return imprint.LLMResponse{}, ctx.Err()
	}
	// The slot is the request's: it is given back as soon as the reply is
	// in, before the call is recorded (a store write), so the next
	// request need not wait on it.
	release := sync.OnceFunc(func() { <-c.sem })
	defer release()
	settle := func(int) {}
	if c.opts.Budget != nil {
		var err error
		if settle, err = c.opts.Budget.Reserve(ctx, req.Scope); err != nil {
			return imprint.LLMResponse{}, err
		}
	}

	actx, cancel := context.WithTimeout(ctx, timeout)
	start := time.Now()
	resp, err := c.p.Do(actx, req)
	latency := time.Since(start)
	release()
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		err = &attemptTimeout{timeout: timeout, err: err}
	}
	cancel()

	call := imprint.LLMCall{
		Op:       req.Op,
		Scope:    req.Scope,
		Provider: c.p.Name(),
		Model:    c.p.Model(),
		Latency:  latency,
		Outcome:  "ok",
		Attempt:  n,
		At:       imprint.At(start),
	}
	if err != nil {
		call.Outcome = imprint.ErrorCode(classify(ctx, err).kind)
	} else {
		if resp.Model == "" {
			resp.Model = c.p.Model()
		}
		if resp.PromptTokens <= 0 {
			resp.PromptTokens = PromptTokens(req)
			call.TokensEstimated = true
		}
		if resp.CompletionTokens <= 0 && resp.Text != "" {
			resp.CompletionTokens = imprint.EstimateTokens(resp.Text)
			call.TokensEstimated = true
		}
		call.PromptTokens = resp.PromptTokens
		call.CompletionTokens = resp.CompletionTokens
	}
	settle(call.PromptTokens)
	c.record(ctx, call)
	return resp, err
}

// PromptTokens estimates the prompt tokens of req: its system prompt and
// every message, with imprint.EstimateTokens.
func PromptTokens(req imprint.LLMRequest) int {
	n := imprint.EstimateTokens(req.System)
	for _, m := range req.Messages {
		n += imprint.EstimateTokens(m.Content)
	}
	return n
}

func (c *Client) record(ctx context.Context, call imprint.LLMCall) {
	if c.opts.Recorder == nil {
		return
	}
	// The attempt happened even if the caller has given up; record it.
	if err := c.opts.Recorder.RecordLLMCall(context.WithoutCancel(ctx), call); err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "record llm call",
			slog.String("op", call.Op), slog.String("error", err.Error()))
	}
}

func (c *Client) redact(req imprint.LLMRequest) imprint.LLMRequest {
	if c.opts.Redact == nil {
		return req
	}
	req.System = c.opts.Redact(req.System)
	msgs := make([]imprint.ChatMessage, len(req.Messages))
	for i, m := range req.Messages {
		m.Content = c.opts.Redact(m.Content)
		msgs[i] = m
	}
	req.Messages = msgs
	return req
}

// backoff returns the full-jitter wait before retry number n (1-based).
func (c *Client) backoff(n int) time.Duration {
	ceil := c.opts.BaseBackoff
	for i := 1; i < n && ceil < maxBackoff; i++ {
		ceil *= 2
	}
	ceil = min(ceil, maxBackoff)
	return rand.N(ceil + 1)
}

// attemptTimeout marks an attempt that ran past its own timeout while the
// caller's context was still live.
type attemptTimeout struct {
	timeout time.Duration
	err     error
}

func (e *attemptTimeout) Error() string {
	return fmt.Sprintf("no reply within %v: %v", e.timeout, e.err)
}

func (e *attemptTimeout) Unwrap() error { return e.err }

// failure says how an attempt's error is reported and whether to retry.
type failure struct {
	kind       error
	retry      bool
	retryAfter time.Duration
}

func classify(ctx context.Context, err error) failure {
	if cerr := ctx.Err(); cerr != nil {
		return failure{kind: ctxKind(cerr)}
	}
	var at *attemptTimeout
	if errors.As(err, &at) {
		return failure{kind: imprint.ErrLLMTimeout, retry: true}
	}
	var he *HTTPError
	if errors.As(err, &he) {
		switch {
		case he.Status == 401 || he.Status == 403:
			return failure{kind: imprint.ErrLLMAuth}
		case he.Status == 408 || he.Status == 409 || he.Status == 429 || he.Status >= 500:
			return failure{kind: imprint.ErrLLMUnavailable, retry: true, retryAfter: he.RetryAfter}
		default:
			return failure{kind: imprint.ErrLLMUnavailable}
		}
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return failure{kind: imprint.ErrLLMTimeout, retry: true}
	}
	// Network failures and unreadable 2xx bodies are transient provider faults.
	return failure{kind: imprint.ErrLLMUnavailable, retry: true}
}

// ctxKind maps a done context's error to an error kind.
func ctxKind(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return imprint.ErrLLMTimeout
	}
	return imprint.ErrLLMUnavailable
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
