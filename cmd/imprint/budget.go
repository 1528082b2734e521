package main

import (
	"context"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm"
)

// This file wires the LLM budget (llm.budget, import --max-llm-calls).

// defaultBudgetRecheck is the longest a job refused by the LLM budget
// sleeps before it asks again: a budget raised by a restart, or a clock
// that moved, is noticed within it. The recheck costs no LLM call.
const defaultBudgetRecheck = time.Minute

// clockKey carries a test clock through the context of runEnv.
type clockKey struct{}

// testClock is the clock a test gives imprint serve or import: now drives
// the LLM budget's window and recheck bounds how long a refused job waits
// before asking again.
type testClock struct {
	now     func() time.Time
	recheck time.Duration
}

// withTestClock returns ctx carrying c, for tests that move time.
func withTestClock(ctx context.Context, c testClock) context.Context {
	return context.WithValue(ctx, clockKey{}, c)
}

// useClock takes the test clock of ctx, if any, before the LLM is built.
func (a *App) useClock(ctx context.Context) {
	if c, ok := ctx.Value(clockKey{}).(testClock); ok {
		a.mu.Lock()
		a.clock = c
		a.mu.Unlock()
	}
}

// budgetRecheck is how long a job refused by the budget sleeps at most.
func (a *App) budgetRecheck() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.clock.recheck > 0 {
		return a.clock.recheck
	}
	return defaultBudgetRecheck
}

// newBudget returns the LLM budget of the configuration and of
// --max-llm-calls, or nil when no limit is set; a.mu is held.
func (a *App) newBudget() *llm.Budget {
	c := a.Config.LLM.Budget
	lim := llm.BudgetLimits{CallsPerHour: c.CallsPerHour, PromptTokensPerHour: c.PromptTokensPerHour, TotalCalls: a.maxLLMCalls}
	if lim.Off() {
		return nil
	}
	return llm.NewBudget(lim, llm.BudgetOptions{Now: a.clock.now, Source: &a.recorder})
}

// LLMBudget returns the budget the LLM client enforces, or nil (no limit,
// or no LLM). Call it after LLM.
func (a *App) LLMBudget() *llm.Budget {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.budget
}

// LLMCallsOfScope implements llm.CallSource from the store's call log once
// the store is open; before, and for stores without a scoped log, a
// scope's window starts empty.
func (r *callRecorder) LLMCallsOfScope(ctx context.Context, scope imprint.Scope, since time.Time) ([]imprint.LLMCall, error) {
	ref := r.store.Load()
	if ref == nil {
		return nil, nil
	}
	src, ok := ref.s.(llm.CallSource)
	if !ok {
		return nil, nil
	}
	return src.LLMCallsOfScope(ctx, scope, since)
}
