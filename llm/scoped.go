package llm

import (
	"context"
	"errors"
	"sync"

	"github.com/imprint-dev/imprint"
)

// Scoped is an imprint.LLM that charges the requests of one piece of work
// to a scope: it sets Scope on every request that names none. It remembers
// the first request a budget refused, so work that degrades on LLM
// failures (capture grades steps one by one) can tell a refusal, which
// must wait, from a failure. It is safe for concurrent use.
type Scoped struct {
	m     imprint.LLM
	scope imprint.Scope

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
	resp, err := s.m.Complete(ctx, req)
	if errors.Is(err, imprint.ErrLLMBudget) {
		s.mu.Lock()
		if s.refused == nil {
			s.refused = err
		}
		s.mu.Unlock()
	}
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
