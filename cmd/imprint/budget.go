package main

import (
	"context"
	"time"

	"github.com/imprint-dev/imprint/llm"
)

// This file wires the LLM budget (llm.budget, import --max-llm-calls).

// useClock takes the clock of ctx (llm.WithClock; tests move time) before
// the LLM is built.
func (a *App) useClock(ctx context.Context) {
	a.mu.Lock()
	a.clock = llm.ClockFrom(ctx)
	a.mu.Unlock()
}

// budgetRecheck is how long a job refused by the budget sleeps at most.
func (a *App) budgetRecheck() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.clock.RecheckEvery()
}

// newBudget returns the LLM budget of the configuration and of
// --max-llm-calls, or nil when no limit is set; a.mu is held.
func (a *App) newBudget() *llm.Budget {
	c := a.Config.LLM.Budget
	lim := llm.BudgetLimits{CallsPerHour: c.CallsPerHour, PromptTokensPerHour: c.PromptTokensPerHour, TotalCalls: a.maxLLMCalls}
	if lim.Off() {
		return nil
	}
	return llm.NewBudget(lim, llm.BudgetOptions{Now: a.clock.Now, Source: &a.recorder})
}

// LLMBudget returns the budget the LLM client enforces, or nil (no limit,
// or no LLM). Call it after LLM.
func (a *App) LLMBudget() *llm.Budget {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.budget
}
