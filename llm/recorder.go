package llm

import (
	"context"
	"sync"

	"github.com/imprint-dev/imprint"
)

// MemoryRecorder is an imprint.CallRecorder that keeps the calls in memory.
// The zero value is ready to use; it is safe for concurrent use.
type MemoryRecorder struct {
	mu    sync.Mutex
	calls []imprint.LLMCall
}

var _ imprint.CallRecorder = (*MemoryRecorder)(nil)

// RecordLLMCall appends c. It never fails.
func (r *MemoryRecorder) RecordLLMCall(_ context.Context, c imprint.LLMCall) error {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	return nil
}

// Calls returns a copy of the recorded calls, in the order they were recorded.
func (r *MemoryRecorder) Calls() []imprint.LLMCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]imprint.LLMCall(nil), r.calls...)
}

// Usage sums the recorded calls by op: attempts, tokens, failed attempts and
// latency.
func (r *MemoryRecorder) Usage() map[string]imprint.LLMUsage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]imprint.LLMUsage)
	for _, c := range r.calls {
		u := out[c.Op]
		u.Calls++
		u.PromptTokens += c.PromptTokens
		u.CompletionTokens += c.CompletionTokens
		if c.Outcome != "ok" {
			u.Errors++
		}
		u.LatencyMS += c.Latency.Milliseconds()
		out[c.Op] = u
	}
	return out
}

// Reset forgets the recorded calls.
func (r *MemoryRecorder) Reset() {
	r.mu.Lock()
	r.calls = nil
	r.mu.Unlock()
}
