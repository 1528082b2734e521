package llm

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/imprint-dev/imprint"
)

// BudgetWindow is the sliding window of the hourly limits.
const BudgetWindow = time.Hour

// BudgetLimits are the limits a Budget enforces; 0 turns a limit off.
type BudgetLimits struct {
	// CallsPerHour caps a scope's call attempts in any hour.
	CallsPerHour int
	// PromptTokensPerHour caps a scope's prompt tokens in any hour. It is
	// checked before a call, so the call that reaches it may pass it by
	// its own prompt.
	PromptTokensPerHour int
	// TotalCalls caps the call attempts made through the Budget over its
	// life, every scope together (imprint import --max-llm-calls). It is
	// soft: it refuses the calls that start work, not those that continue
	// work in flight (imprint.Continuing), so no work is cut half-way and redone.
	// Such a refusal never frees up: its BudgetError has a zero Until.
	TotalCalls int
}

// Off reports whether no limit is set.
func (l BudgetLimits) Off() bool {
	return l.CallsPerHour <= 0 && l.PromptTokensPerHour <= 0 && l.TotalCalls <= 0
}

// CallSource reads the persisted call log, so that a scope's window
// survives a restart. The sqlite store implements it.
type CallSource interface {
	// LLMCallsOfScope returns the calls of scope recorded at or after
	// since.
	LLMCallsOfScope(ctx context.Context, scope imprint.Scope, since time.Time) ([]imprint.LLMCall, error)
}

// BudgetOptions are a Budget's collaborators; zero fields take defaults.
type BudgetOptions struct {
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
	// Source seeds a scope's window the first time the scope is seen; nil
	// starts every scope empty.
	Source CallSource
}

// Budget limits the LLM calls and prompt tokens of each scope in a sliding
// hour (BudgetLimits). A Client with a Budget asks it before every
// attempt; a refused request fails with an *imprint.BudgetError naming
// when the budget frees up, and nothing is sent. It is safe for concurrent
// use.
type Budget struct {
	limits BudgetLimits
	now    func() time.Time
	source CallSource

	mu     sync.Mutex
	total  int
	scopes map[imprint.Scope]*window
}

// window is one scope's calls of the last hour, oldest first.
type window struct {
	calls []*spend
}

// spend is one call attempt: when it started and its prompt tokens (0
// until it is settled).
type spend struct {
	at     time.Time
	tokens int
}

// NewBudget returns a Budget enforcing l.
func NewBudget(l BudgetLimits, o BudgetOptions) *Budget {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Budget{limits: l, now: o.Now, source: o.Source, scopes: map[imprint.Scope]*window{}}
}

// budgetKey is the part of a scope budgets are kept by (as stores scope).
func budgetKey(s imprint.Scope) imprint.Scope {
	return imprint.Scope{Tenant: s.Tenant, User: s.User, Agent: s.Agent}
}

// Reserve takes one call attempt for scope from the budget, or returns an
// *imprint.BudgetError when a limit is reached. settle records the
// attempt's prompt tokens once known. A zero scope is charged only to
// TotalCalls. Errors of the call source are returned wrapped (kind
// ErrUnavailable from the store).
func (b *Budget) Reserve(ctx context.Context, scope imprint.Scope) (settle func(promptTokens int), err error) {
	key := budgetKey(scope)
	hourly := key != (imprint.Scope{}) && (b.limits.CallsPerHour > 0 || b.limits.PromptTokensPerHour > 0)
	var w *window
	if hourly {
		if w, err = b.window(ctx, key); err != nil {
			return nil, err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limits.TotalCalls > 0 && b.total >= b.limits.TotalCalls && !imprint.IsContinuing(ctx) {
		return nil, &imprint.BudgetError{Scope: key, Limit: fmt.Sprintf("max_llm_calls %d", b.limits.TotalCalls)}
	}
	now := b.now()
	if hourly {
		w.prune(now)
		if limit, until, spent := b.spent(w); spent {
			return nil, &imprint.BudgetError{Scope: key, Limit: limit, Until: until}
		}
	}
	b.total++
	if !hourly {
		return func(int) {}, nil
	}
	sp := &spend{at: now}
	w.calls = append(w.calls, sp)
	return func(tokens int) {
		b.mu.Lock()
		sp.tokens = tokens
		b.mu.Unlock()
	}, nil
}

// window returns key's window, seeding it from the call source the first
// time.
func (b *Budget) window(ctx context.Context, key imprint.Scope) (*window, error) {
	b.mu.Lock()
	w, ok := b.scopes[key]
	b.mu.Unlock()
	if ok {
		return w, nil
	}
	w = &window{}
	if b.source != nil {
		calls, err := b.source.LLMCallsOfScope(ctx, key, b.now().Add(-BudgetWindow))
		if err != nil {
			return nil, fmt.Errorf("llm budget of %s: %w", key, err)
		}
		for _, c := range calls {
			w.calls = append(w.calls, &spend{at: c.At.Time, tokens: c.PromptTokens})
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if old, ok := b.scopes[key]; ok {
		return old, nil
	}
	b.scopes[key] = w
	return w, nil
}

// prune drops the calls that left the window at now.
func (w *window) prune(now time.Time) {
	cut := 0
	for cut < len(w.calls) && !w.calls[cut].at.After(now.Add(-BudgetWindow)) {
		cut++
	}
	w.calls = w.calls[cut:]
}

// spent reports whether w reached a limit, which one, and when enough of
// its calls leave the window for the next call to pass; b.mu is held.
func (b *Budget) spent(w *window) (string, time.Time, bool) {
	var limit string
	var until time.Time
	if n := b.limits.CallsPerHour; n > 0 && len(w.calls) >= n {
		// The next call passes once len-n+1 of the oldest have left.
		limit, until = "calls_per_hour", w.calls[len(w.calls)-n].at.Add(BudgetWindow)
	}
	if n := b.limits.PromptTokensPerHour; n > 0 {
		used := w.tokens()
		if used >= n {
			for _, c := range w.calls {
				used -= c.tokens
				if used < n {
					if t := c.at.Add(BudgetWindow); t.After(until) {
						limit, until = "prompt_tokens_per_hour", t
					}
					break
				}
			}
		}
	}
	return limit, until, limit != ""
}

func (w *window) tokens() int {
	n := 0
	for _, c := range w.calls {
		n += c.tokens
	}
	return n
}

// State returns scope's budget now; a nil Budget has no limits. Errors
// come from the call source.
func (b *Budget) State(ctx context.Context, scope imprint.Scope) (imprint.BudgetState, error) {
	if b == nil {
		return imprint.BudgetState{}, nil
	}
	st := imprint.BudgetState{CallsPerHour: b.limits.CallsPerHour, PromptTokensPerHour: b.limits.PromptTokensPerHour}
	key := budgetKey(scope)
	if key == (imprint.Scope{}) || (b.limits.CallsPerHour <= 0 && b.limits.PromptTokensPerHour <= 0) {
		return st, nil
	}
	w, err := b.window(ctx, key)
	if err != nil {
		return st, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	w.prune(b.now())
	st.Calls, st.PromptTokens = len(w.calls), w.tokens()
	if len(w.calls) > 0 {
		st.ResetsAt = imprint.At(w.calls[0].at.Add(BudgetWindow))
	}
	if _, until, spent := b.spent(w); spent {
		st.Exhausted, st.FreesAt = true, imprint.At(until)
	}
	return st, nil
}
