package llm

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/imprint-dev/imprint"
)

// LogRecorder records every LLM call attempt in memory (Mem, for the
// summaries a command prints) and, once SetLog gave it one, in a store's
// call log. It is also a budget's CallSource: a scope's window starts
// from the call log once there is one. It is safe for concurrent use.
type LogRecorder struct {
	Mem MemoryRecorder
	log atomic.Pointer[logRef]
}

type logRef struct{ l imprint.CallRecorder }

// SetLog makes r record in l from now on; nil stops it.
func (r *LogRecorder) SetLog(l imprint.CallRecorder) {
	if l == nil {
		r.log.Store(nil)
		return
	}
	r.log.Store(&logRef{l})
}

// RecordLLMCall implements imprint.CallRecorder.
func (r *LogRecorder) RecordLLMCall(ctx context.Context, c imprint.LLMCall) error {
	_ = r.Mem.RecordLLMCall(ctx, c)
	if ref := r.log.Load(); ref != nil {
		if err := ref.l.RecordLLMCall(ctx, c); err != nil {
			return fmt.Errorf("record llm call: %w", err)
		}
	}
	return nil
}

// LLMCallsOfScope implements CallSource from the call log when it has a
// scoped one; before SetLog, and for logs without, a scope's window
// starts empty.
func (r *LogRecorder) LLMCallsOfScope(ctx context.Context, scope imprint.Scope, since time.Time) ([]imprint.LLMCall, error) {
	ref := r.log.Load()
	if ref == nil {
		return nil, nil
	}
	src, ok := ref.l.(CallSource)
	if !ok {
		return nil, nil
	}
	return src.LLMCallsOfScope(ctx, scope, since)
}

// DefaultBudgetRecheck is the longest a job refused by the LLM budget
// sleeps before it asks again: a budget raised by a restart, or a clock
// that moved, is noticed within it. The recheck costs no LLM call.
const DefaultBudgetRecheck = time.Minute

// Clock is the time a budget runs on: Now drives its window (nil:
// time.Now) and Recheck bounds how long a refused job waits before it asks
// again (0: DefaultBudgetRecheck). Tests move it; production uses the zero
// Clock.
type Clock struct {
	Now     func() time.Time
	Recheck time.Duration
}

type clockKey struct{}

// WithClock returns ctx carrying c, for the budget of a process started
// under ctx (a test of imprint serve or import that moves time).
func WithClock(ctx context.Context, c Clock) context.Context {
	return context.WithValue(ctx, clockKey{}, c)
}

// ClockFrom returns the Clock ctx carries (WithClock), else the zero Clock.
func ClockFrom(ctx context.Context) Clock {
	c, _ := ctx.Value(clockKey{}).(Clock)
	return c
}

// RecheckEvery is c's Recheck, or DefaultBudgetRecheck.
func (c Clock) RecheckEvery() time.Duration {
	if c.Recheck > 0 {
		return c.Recheck
	}
	return DefaultBudgetRecheck
}
