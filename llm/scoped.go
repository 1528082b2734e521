package llm

import (
	"context"
	"errors"
	"sync"

	"github.com/imprint-dev/imprint"
)

// Scoped is an imprint.LLM for the requests of one piece of work (the
// capture of an episode): it charges them to a scope, setting Scope on
// every request that names none, and once one request passed the budget
// the others go as Continuing, so a limit on calls (--max-llm-calls) does
// not cut the work half-way. The first request runs alone, so requests
// sent at once all pass or all wait. Scoped remembers the first request a
// budget refused, so work that degrades on LLM failures can tell a
// refusal, which must wait, from a failure. It is safe for concurrent use.
type Scoped struct {
	m     imprint.LLM
	scope imprint.Scope

	// first is held during the first request until one passes the budget.
	first  sync.Mutex
	passed bool

	mu      sync.Mutex
	refused error
}

var _ imprint.LLM = (*Scoped)(nil)

// WithScope returns m charging its requests to scope.
func WithScope(m imprint.LLM, scope imprint.Scope) *Scoped {
	return &Scoped{m: m, scope: scope}
}

// Complete sends req through the wrapped LLM with the scope set.
func (s *Scoped) Complete(ctx context.Context, req imprint.LLMRequest) (imprint.LLMResponse, error) {
	if req.Scope == (imprint.Scope{}) {
		req.Scope = s.scope
	}
	resp, err := s.complete(ctx, req)
	if errors.Is(err, imprint.ErrLLMBudget) {
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
func (s *Scoped) complete(ctx context.Context, req imprint.LLMRequest) (imprint.LLMResponse, error) {
	s.first.Lock()
	if s.passed {
		s.first.Unlock()
		return s.m.Complete(Continuing(ctx), req)
	}
	defer s.first.Unlock()
	resp, err := s.m.Complete(ctx, req)
	s.passed = !errors.Is(err, imprint.ErrLLMBudget)
	return resp, err
}

// Refused returns the error of the first request a budget refused, or nil.
func (s *Scoped) Refused() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Provider names the wrapped LLM's provider.
func (s *Scoped) Provider() string { return s.m.Provider() }

// Model names the wrapped LLM's model.
func (s *Scoped) Model() string { return s.m.Model() }
