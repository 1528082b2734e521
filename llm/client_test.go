package llm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

var formats = []string{llmtest.FormatOpenAI, llmtest.FormatAnthropic}

// waits records the waits a client asked for instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

type fixture struct {
	srv   *llmtest.Server
	cl    *llm.Client
	rec   *llm.MemoryRecorder
	waits *waits
}

func newFixture(t *testing.T, format string, opts ...func(*llm.Options)) fixture {
	t.Helper()
	f := fixture{srv: llmtest.NewServer(t), rec: &llm.MemoryRecorder{}, waits: &waits{}}
	all := append([]func(*llm.Options){func(o *llm.Options) {
		o.Recorder = f.rec
		o.Sleep = f.waits.sleep
	}}, opts...)
	f.cl = llmtest.NewClient(t, f.srv, format, all...)
	return f
}

func userReq(op, text string) imprint.LLMRequest {
	return imprint.LLMRequest{Op: op, System: "You score steps.", Messages: []imprint.ChatMessage{{Role: "user", Content: text}}}
}

// outcomes lists "attempt:outcome" of the recorded calls.
func outcomes(calls []imprint.LLMCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, fmt.Sprintf("%s#%d:%s", c.Op, c.Attempt, c.Outcome))
	}
	return out
}

func TestCompleteRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		replies      []llmtest.Reply
		maxRetries   int
		wantErr      error
		wantText     string
		wantOutcomes []string
		wantWaits    []time.Duration // nil: not checked
	}{
		{
			name:         "429 honours Retry-After seconds",
			replies:      []llmtest.Reply{llmtest.Fault429("2"), llmtest.Text("fine")},
			wantText:     "fine",
			wantOutcomes: []string{"op#1:llm_unavailable", "op#2:ok"},
			wantWaits:    []time.Duration{2 * time.Second},
		},
		{
			name:         "429 Retry-After is capped",
			replies:      []llmtest.Reply{llmtest.Fault429("3600"), llmtest.Text("fine")},
			wantText:     "fine",
			wantOutcomes: []string{"op#1:llm_unavailable", "op#2:ok"},
			wantWaits:    []time.Duration{llm.MaxRetryAfter},
		},
		{
			name:         "500 then success",
			replies:      []llmtest.Reply{llmtest.Fault500(), llmtest.Fault500(), llmtest.Text("fine")},
			wantText:     "fine",
			wantOutcomes: []string{"op#1:llm_unavailable", "op#2:llm_unavailable", "op#3:ok"},
		},
		{
			name:         "malformed 200 body is retried",
			replies:      []llmtest.Reply{llmtest.Malformed(), llmtest.Text("fine")},
			wantText:     "fine",
			wantOutcomes: []string{"op#1:llm_unavailable", "op#2:ok"},
		},
		{
			name:         "500 until retries run out",
			replies:      []llmtest.Reply{llmtest.Fault500()},
			maxRetries:   2,
			wantErr:      imprint.ErrLLMUnavailable,
			wantOutcomes: []string{"op#1:llm_unavailable", "op#2:llm_unavailable", "op#3:llm_unavailable"},
		},
		{
			name:         "no retries when disabled",
			replies:      []llmtest.Reply{llmtest.Fault500()},
			maxRetries:   -1,
			wantErr:      imprint.ErrLLMUnavailable,
			wantOutcomes: []string{"op#1:llm_unavailable"},
		},
		{
			name:         "401 is auth and not retried",
			replies:      []llmtest.Reply{llmtest.Status(401), llmtest.Text("never")},
			wantErr:      imprint.ErrLLMAuth,
			wantOutcomes: []string{"op#1:llm_auth"},
			wantWaits:    []time.Duration{},
		},
		{
			name:         "403 is auth and not retried",
			replies:      []llmtest.Reply{llmtest.Status(403), llmtest.Text("never")},
			wantErr:      imprint.ErrLLMAuth,
			wantOutcomes: []string{"op#1:llm_auth"},
		},
		{
			name:         "400 is not retried",
			replies:      []llmtest.Reply{llmtest.Status(400), llmtest.Text("never")},
			wantErr:      imprint.ErrLLMUnavailable,
			wantOutcomes: []string{"op#1:llm_unavailable"},
		},
	}
	for _, format := range formats {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, format, func(o *llm.Options) { o.MaxRetries = tt.maxRetries })
				f.srv.Script("op", tt.replies...)
				resp, err := f.cl.Complete(t.Context(), userReq("op", "hello"))
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("Complete error = %v, want kind %v", err, tt.wantErr)
					}
				} else if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if resp.Text != tt.wantText {
					t.Errorf("Text = %q, want %q", resp.Text, tt.wantText)
				}
				if diff := cmp.Diff(tt.wantOutcomes, outcomes(f.rec.Calls())); diff != "" {
					t.Errorf("recorded calls (-want +got):\n%s", diff)
				}
				if got := len(f.srv.Requests()); got != len(tt.wantOutcomes) {
					t.Errorf("server saw %d requests, want %d", got, len(tt.wantOutcomes))
				}
				if tt.wantWaits != nil {
					if diff := cmp.Diff(tt.wantWaits, f.waits.all(), cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("waits (-want +got):\n%s", diff)
					}
				}
				for _, w := range f.waits.all() {
					if w < 0 || w > llm.MaxRetryAfter {
						t.Errorf("wait %v out of range", w)
					}
				}
			})
		}
	}
}

func TestCompleteBackoffGrowsWithinBounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, llmtest.FormatOpenAI, func(o *llm.Options) {
		o.BaseBackoff = 100 * time.Millisecond
		o.MaxRetries = 3
	})
	f.srv.Script("op", llmtest.Fault500())
	if _, err := f.cl.Complete(t.Context(), userReq("op", "x")); !errors.Is(err, imprint.ErrLLMUnavailable) {
		t.Fatalf("Complete error = %v, want ErrLLMUnavailable", err)
	}
	got := f.waits.all()
	if len(got) != 3 {
		t.Fatalf("waited %d times, want 3", len(got))
	}
	for i, w := range got {
		ceil := 100 * time.Millisecond << i
		if w < 0 || w > ceil {
			t.Errorf("wait %d = %v, want within [0, %v]", i+1, w, ceil)
		}
	}
}

func TestCompleteAttemptTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    func(*llm.Options)
		timeout time.Duration
	}{
		{"client timeout", func(o *llm.Options) { o.Timeout = 50 * time.Millisecond; o.MaxRetries = 1 }, 0},
		{"request timeout overrides", func(o *llm.Options) { o.Timeout = time.Minute; o.MaxRetries = 1 }, 50 * time.Millisecond},
	}
	for _, format := range formats {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, format, tt.opts)
				f.srv.Script("op", llmtest.Timeout(time.Minute))
				req := userReq("op", "x")
				req.Timeout = tt.timeout
				_, err := f.cl.Complete(t.Context(), req)
				if !errors.Is(err, imprint.ErrLLMTimeout) {
					t.Fatalf("Complete error = %v, want ErrLLMTimeout", err)
				}
				if got := imprint.ErrorCode(err); got != "llm_timeout" {
					t.Errorf("ErrorCode = %q, want llm_timeout", got)
				}
				want := []string{"op#1:llm_timeout", "op#2:llm_timeout"}
				if diff := cmp.Diff(want, outcomes(f.rec.Calls())); diff != "" {
					t.Errorf("recorded calls (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestCompleteCallerDeadlineIsNotRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t, llmtest.FormatOpenAI)
	f.srv.Script("op", llmtest.Timeout(time.Minute))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := f.cl.Complete(ctx, userReq("op", "x"))
	if !errors.Is(err, imprint.ErrLLMTimeout) {
		t.Fatalf("Complete error = %v, want ErrLLMTimeout", err)
	}
	if got := len(f.srv.Requests()); got != 1 {
		t.Errorf("server saw %d requests, want 1", got)
	}
}

func TestCompleteConcurrencyCap(t *testing.T) {
	t.Parallel()
	const limit, calls = 3, 12
	f := newFixture(t, llmtest.FormatOpenAI, func(o *llm.Options) { o.Concurrency = limit })
	gate := make(chan struct{})
	f.srv.Handle("op", func(llmtest.Request) llmtest.Reply {
		<-gate
		return llmtest.Text("ok")
	})
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Go(func() {
			_, err := f.cl.Complete(t.Context(), userReq("op", "x"))
			errs <- err
		})
	}
	// Hold every reply until the cap is reached, so a missing cap would
	// let more requests in.
	deadline := time.Now().Add(5 * time.Second)
	for f.srv.InFlight() < limit && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
	}
	if got := f.srv.MaxInFlight(); got != limit {
		t.Errorf("max in-flight requests = %d, want %d", got, limit)
	}
	if got := len(f.rec.Calls()); got != calls {
		t.Errorf("recorded %d calls, want %d", got, calls)
	}
}

// blockingRecorder holds every recording until release is closed.
type blockingRecorder struct {
	recording chan struct{}
	release   chan struct{}
}

func (r blockingRecorder) RecordLLMCall(context.Context, imprint.LLMCall) error {
	r.recording <- struct{}{}
	<-r.release
	return nil
}

// TestCompleteSlotFreeWhileRecording checks that recording a call (a store
// write) does not hold the concurrency slot: with one slot, a second request
// is sent while the first call's recording is still held back.
func TestCompleteSlotFreeWhileRecording(t *testing.T) {
	t.Parallel()
	rec := blockingRecorder{recording: make(chan struct{}, 2), release: make(chan struct{})}
	f := newFixture(t, llmtest.FormatOpenAI, func(o *llm.Options) {
		o.Concurrency = 1
		o.Recorder = rec
	})
	f.srv.Handle("op", func(llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	errs := make(chan error, 2)
	go func() {
		_, err := f.cl.Complete(t.Context(), userReq("op", "first"))
		errs <- err
	}()
	<-rec.recording // the first call is answered and being recorded
	go func() {
		_, err := f.cl.Complete(t.Context(), userReq("op", "second"))
		errs <- err
	}()
	select {
	case <-rec.recording: // the second was sent and answered meanwhile
	case <-time.After(10 * time.Second):
		t.Fatal("the second request waited for the first call's recording")
	}
	close(rec.release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("Complete: %v", err)
		}
	}
}

func TestCompleteUsage(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format+"/reported", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, format)
			f.srv.Script("op", llmtest.Reply{Text: "answer", PromptTokens: 11, CompletionTokens: 7})
			resp, err := f.cl.Complete(t.Context(), userReq("op", "question"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.PromptTokens != 11 || resp.CompletionTokens != 7 {
				t.Errorf("response tokens = %d/%d, want 11/7", resp.PromptTokens, resp.CompletionTokens)
			}
			calls := f.rec.Calls()
			if len(calls) != 1 {
				t.Fatalf("recorded %d calls, want 1", len(calls))
			}
			c := calls[0]
			if c.PromptTokens != 11 || c.CompletionTokens != 7 || c.TokensEstimated {
				t.Errorf("recorded tokens = %d/%d estimated=%v, want 11/7 reported", c.PromptTokens, c.CompletionTokens, c.TokensEstimated)
			}
			if c.Provider != format || c.Model != llmtest.TestModel || c.Op != "op" || c.Outcome != "ok" || c.Attempt != 1 || c.At.IsZero() {
				t.Errorf("recorded call = %+v", c)
			}
		})
		t.Run(format+"/estimated", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, format)
			f.srv.Script("op", llmtest.Reply{Text: "a reply of some length", NoUsage: true})
			req := userReq("op", "a question that is long enough")
			resp, err := f.cl.Complete(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			wantPrompt := imprint.EstimateTokens(req.System) + imprint.EstimateTokens(req.Messages[0].Content)
			wantCompletion := imprint.EstimateTokens(resp.Text)
			if resp.PromptTokens != wantPrompt || resp.CompletionTokens != wantCompletion {
				t.Errorf("response tokens = %d/%d, want %d/%d", resp.PromptTokens, resp.CompletionTokens, wantPrompt, wantCompletion)
			}
			c := f.rec.Calls()[0]
			if !c.TokensEstimated || c.PromptTokens != wantPrompt || c.CompletionTokens != wantCompletion {
				t.Errorf("recorded call = %+v, want estimated %d/%d", c, wantPrompt, wantCompletion)
			}
		})
	}
}

func TestCompleteRedactsBeforeSending(t *testing.T) {
	t.Parallel()
	redact := func(s string) string { return strings.ReplaceAll(s, "sk-secret123", "[REDACTED]") }
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, format, func(o *llm.Options) { o.Redact = redact })
			f.srv.Script("op", llmtest.Text("ok"))
			req := imprint.LLMRequest{
				Op:     "op",
				System: "key sk-secret123 in system",
				Messages: []imprint.ChatMessage{
					{Role: "user", Content: "my key is sk-secret123"},
					{Role: "assistant", Content: "noted sk-secret123"},
					{Role: "user", Content: "thanks"},
				},
			}
			if _, err := f.cl.Complete(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			got := f.srv.Requests()[0]
			if bytes.Contains(got.Body, []byte("sk-secret123")) {
				t.Errorf("request body carries the secret: %s", got.Body)
			}
			if !strings.Contains(got.System, "[REDACTED]") || !strings.Contains(got.Messages[0].Content, "[REDACTED]") || !strings.Contains(got.Messages[1].Content, "[REDACTED]") {
				t.Errorf("request not redacted: system %q messages %+v", got.System, got.Messages)
			}
			if req.Messages[0].Content != "my key is sk-secret123" {
				t.Errorf("caller's request was modified: %q", req.Messages[0].Content)
			}
		})
	}
}

type failingRecorder struct{}

func (failingRecorder) RecordLLMCall(context.Context, imprint.LLMCall) error {
	return errors.New("disk full")
}

func TestCompleteRecorderErrorIsLoggedNotReturned(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var mu sync.Mutex
	f := newFixture(t, llmtest.FormatOpenAI, func(o *llm.Options) {
		o.Recorder = failingRecorder{}
		o.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	})
	f.srv.Script("op", llmtest.Text("ok"))
	if _, err := f.cl.Complete(t.Context(), userReq("op", "x")); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "disk full") {
		t.Errorf("recorder error not logged; logs:\n%s", logs.String())
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestCompleteRequiresOp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, llmtest.FormatOpenAI)
	_, err := f.cl.Complete(t.Context(), userReq("", "x"))
	if !errors.Is(err, imprint.ErrInvalid) {
		t.Fatalf("Complete error = %v, want ErrInvalid", err)
	}
	if n := len(f.srv.Requests()); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
}

func TestClientNames(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		f := newFixture(t, format)
		if f.cl.Provider() != format || f.cl.Model() != llmtest.TestModel {
			t.Errorf("Provider/Model = %q/%q, want %q/%q", f.cl.Provider(), f.cl.Model(), format, llmtest.TestModel)
		}
	}
}

func TestMemoryRecorderUsage(t *testing.T) {
	t.Parallel()
	var r llm.MemoryRecorder
	for _, c := range []imprint.LLMCall{
		{Op: "a", PromptTokens: 10, CompletionTokens: 2, Outcome: "ok", Latency: 3 * time.Millisecond},
		{Op: "a", Outcome: "llm_unavailable", Latency: time.Millisecond},
		{Op: "b", PromptTokens: 5, CompletionTokens: 1, Outcome: "ok"},
	} {
		if err := r.RecordLLMCall(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]imprint.LLMUsage{
		"a": {Calls: 2, PromptTokens: 10, CompletionTokens: 2, Errors: 1, LatencyMS: 4},
		"b": {Calls: 1, PromptTokens: 5, CompletionTokens: 1},
	}
	if diff := cmp.Diff(want, r.Usage()); diff != "" {
		t.Errorf("Usage (-want +got):\n%s", diff)
	}
	r.Reset()
	if n := len(r.Calls()); n != 0 {
		t.Errorf("after Reset, %d calls", n)
	}
}

func BenchmarkComplete(b *testing.B) {
	srv := llmtest.NewServer(b)
	srv.Script("op", llmtest.Text(`{"alpha": 0.5, "usable": true, "reason": "ok"}`))
	cl := llmtest.NewClient(b, srv, llmtest.FormatOpenAI, func(o *llm.Options) { o.Recorder = &llm.MemoryRecorder{} })
	req := userReq("op", strings.Repeat("STATE: the agent read the file. ", 20))
	for b.Loop() {
		if _, err := cl.Complete(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
