package imprint

import "strings"

// DefaultScopePart is the value of every scope field that is not given.
const DefaultScopePart = "default"

// Scope says who a record belongs to. Every read, write and dedup recall is
// filtered by scope; nothing crosses scopes.
type Scope struct {
	Tenant    string `json:"tenant"`
	User      string `json:"user"`
	Agent     string `json:"agent"`
	Workspace string `json:"workspace,omitempty"`
}

// DefaultScope returns the scope used when none is given.
func DefaultScope() Scope {
	return Scope{Tenant: DefaultScopePart, User: DefaultScopePart, Agent: DefaultScopePart}
}

// WithDefaults fills empty tenant, user and agent with "default".
func (s Scope) WithDefaults() Scope {
	if strings.TrimSpace(s.Tenant) == "" {
		s.Tenant = DefaultScopePart
	}
	if strings.TrimSpace(s.User) == "" {
		s.User = DefaultScopePart
	}
	if strings.TrimSpace(s.Agent) == "" {
		s.Agent = DefaultScopePart
	}
	return s
}

// Validate returns ErrInvalid when a scope field is empty or too long.
// Stores call it on every read and write, so an unscoped query cannot happen.
func (s Scope) Validate() error {
	for _, f := range []struct{ name, v string }{{"scope.tenant", s.Tenant}, {"scope.user", s.User}, {"scope.agent", s.Agent}} {
		if strings.TrimSpace(f.v) == "" {
			return Invalidf("%s is required", f.name)
		}
		if len(f.v) > 256 {
			return Invalidf("%s is longer than 256 bytes", f.name)
		}
	}
	return nil
}

// String returns "tenant/user/agent".
func (s Scope) String() string { return s.Tenant + "/" + s.User + "/" + s.Agent }
