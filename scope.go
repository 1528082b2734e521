package imprint

import "strings"

// DefaultScopePart is the value of every scope field that is not given.
const DefaultScopePart = "default"

// Scope says who a record belongs to. Every read, write and dedup recall is
// filtered by scope; nothing crosses scopes. The workspace (project) a
// record belongs to is not part of its scope: it is an attribute of the
// record (Message.Workspace, Episode.Workspace, ...) and a filter of
// listings and searches, never part of an id.
type Scope struct {
	Tenant string `json:"tenant"`
	User   string `json:"user"`
	Agent  string `json:"agent"`
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

// Validate returns ErrInvalid naming the field when tenant, user or agent is
// empty, or a part is longer than MaxIDBytes, not valid UTF-8 or holds a
// control character (ValidateID). Stores call it on every read and write,
// so an unscoped query cannot happen.
func (s Scope) Validate() error {
	for _, f := range []struct{ name, v string }{{"scope.tenant", s.Tenant}, {"scope.user", s.User}, {"scope.agent", s.Agent}} {
		if err := ValidateID(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// ValidateWorkspace returns ErrInvalid naming field when the workspace w
// is given but unusable as an id (ValidateID); "" (no workspace) is valid.
func ValidateWorkspace(field, w string) error {
	if w == "" {
		return nil
	}
	return ValidateID(field, w)
}

// String returns "tenant/user/agent", each part escaped by KeyPart, so
// distinct scopes give distinct strings (an agent "a/b" is "a%2Fb") and
// the string holds no control bytes. Parts without '%', ':', '/' or
// control bytes are written as they are.
func (s Scope) String() string {
	return KeyPart(s.Tenant) + "/" + KeyPart(s.User) + "/" + KeyPart(s.Agent)
}
