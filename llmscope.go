package imprint

import (
	"context"
	"errors"
	"sync"
)

// ScopedLLM is an LLM for the requests of one piece of work (the
// capture of an episode): it charges them to a scope, setting Scope on
// every request that names none, and once one request passed the budget
// the others go as Continuing, so a limit on calls (--max-llm-calls) does
// not cut the work half-way. The first request runs alone, so requests
// sent at once all pass or all wait. ScopedLLM remembers the first request a
// budget refused, so work that degrades on LLM failures can tell a
// refusal, which must wait, from a failure. It is safe for concurrent use.
type ScopedLLM struct {
	m     LLM
	scope Scope

	// first is held during the first request until one passes the budget.
	first  sync.Mutex
	passed bool

	mu      sync.Mutex
	refused error
}

var _ LLM = (*ScopedLLM)(nil)

// WithLLMScope returns m charging its requests to scope.
func WithLLMScope(m LLM, scope Scope) *ScopedLLM {
	return &ScopedLLM{m: m, scope: scope}
}

// Complete sends req through the wrapped LLM with the scope set.
func (s *ScopedLLM) Complete(ctx context.Context, req LLMRequest) (LLMResponse, error) {
	if req.Scope == (Scope{}) {
		req.Scope = s.scope
	}
	resp, err := s.complete(ctx, req)
	if errors.Is(err, ErrLLMBudget) {
		s.mu.Lock()
		if s.refused == nil {
			s.refused = err
		}
		s.mu.Unlock()
	}
	return resp, err
}

// complete sends req alone while no request passed the budget yet, else
// as Continuing.
func (s *ScopedLLM) complete(ctx context.Context, req LLMRequest) (LLMResponse, error) {
	s.first.Lock()
	if s.passed {
		s.first.Unlock()
		return s.m.Complete(Continuing(ctx), req)
	}
	defer s.first.Unlock()
	resp, err := s.m.Complete(ctx, req)
	s.passed = !errors.Is(err, ErrLLMBudget)
	return resp, err
}

// Refused returns the error of the first request a budget refused, or nil.
func (s *ScopedLLM) Refused() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Provider names the wrapped LLM's provider.
func (s *ScopedLLM) Provider() string { return s.m.Provider() }

// Model names the wrapped LLM's model.
func (s *ScopedLLM) Model() string { return s.m.Model() }

// continuingKey marks a context whose requests continue work in flight.
type continuingKey struct{}

// Continuing returns ctx marking its requests as continuing work that has
// made a call already (a retry, a repair, the judge after an extraction,
// the next call of a capture): a limit on the calls of one command
// (--max-llm-calls) lets them through so that the work finishes instead
// of being redone. The hourly limits still apply.
func Continuing(ctx context.Context) context.Context {
	return context.WithValue(ctx, continuingKey{}, true)
}

// IsContinuing reports whether ctx was marked by Continuing.
func IsContinuing(ctx context.Context) bool {
	v, _ := ctx.Value(continuingKey{}).(bool)
	return v
}
