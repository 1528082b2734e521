package imprint

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
)

// APIKeyPrefix starts every API key token, so a leaked one is easy to spot
// and to find in a secret scanner.
const APIKeyPrefix = "imp_"

// An APIKey lets a client of imprint serve read, and unless it is read-only
// write, the records of one tenant: of every user and agent of it, or of one
// user, one agent, or one user's agent. Only a hash of its token is stored;
// the token is shown once, when the key is made.
type APIKey struct {
	// ID names the key in listings and in keys revoke; it is not secret.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Scope is what the key may reach: Tenant always, User and Agent when
	// set; an empty User or Agent covers every user or agent of the tenant.
	Scope     KeyScope `json:"scope"`
	ReadOnly  bool     `json:"read_only"`
	CreatedAt Time     `json:"created_at"`
	// RevokedAt is set once the key is revoked; a revoked key opens nothing.
	RevokedAt *Time `json:"revoked_at,omitempty"`
}

// KeyScope is the reach of an API key; empty parts cover every value.
type KeyScope struct {
	Tenant string `json:"tenant"`
	User   string `json:"user,omitempty"`
	Agent  string `json:"agent,omitempty"`
}

// Validate returns ErrInvalid when the tenant is missing or a part is not a
// valid scope part.
func (k KeyScope) Validate() error {
	if strings.TrimSpace(k.Tenant) == "" {
		return Invalidf("a key's tenant is required")
	}
	full := Scope{Tenant: k.Tenant, User: k.User, Agent: k.Agent}.WithDefaults()
	return full.Validate()
}

// KeyScopeOf is the reach of a key asked for part by part, as imprint keys
// create takes it from --tenant, --user and --agent: nil for a part not
// given, which covers every value. ErrInvalid naming the flag for a
// missing tenant or a part given blank, or when a part is not a valid
// scope part.
func KeyScopeOf(tenant, user, agent *string) (KeyScope, error) {
	if tenant == nil || strings.TrimSpace(*tenant) == "" {
		return KeyScope{}, Invalidf("keys create needs --tenant")
	}
	k := KeyScope{Tenant: *tenant}
	for _, p := range []struct {
		flag     string
		v, field *string
	}{{"user", user, &k.User}, {"agent", agent, &k.Agent}} {
		if p.v == nil {
			continue
		}
		if strings.TrimSpace(*p.v) == "" {
			return KeyScope{}, Invalidf("--%s must not be empty (leave it out to cover every %s)", p.flag, p.flag)
		}
		*p.field = *p.v
	}
	return k, k.Validate()
}

// Covers reports whether a request for scope s is within the key's reach.
func (k KeyScope) Covers(s Scope) bool {
	return s.Tenant == k.Tenant && (k.User == "" || s.User == k.User) && (k.Agent == "" || s.Agent == k.Agent)
}

// String returns "tenant/user/agent" with "*" for a part that covers all.
func (k KeyScope) String() string {
	star := func(v string) string {
		if v == "" {
			return "*"
		}
		return v
	}
	return k.Tenant + "/" + star(k.User) + "/" + star(k.Agent)
}

// NewAPIKey makes a key for scope, named name, made at now, with a fresh id
// ("key_" and 20 hex digits) and a fresh token; the token is returned
// once, for the caller to show, and only HashAPIKeyToken(token) is stored.
func NewAPIKey(scope KeyScope, name string, readOnly bool, now Time) (APIKey, string) {
	k := APIKey{ID: "key_" + strings.ReplaceAll(NewID(), "-", "")[:20], Name: name, Scope: scope,
		ReadOnly: readOnly, CreatedAt: now}
	return k, NewAPIKeyToken()
}

// CreateAPIKey mints a key for scope (NewAPIKey, made now) and stores it
// in st with the hash of its token, returning the key and the token, which
// is shown once and kept nowhere. Store errors are wrapped.
func CreateAPIKey(ctx context.Context, st APIKeyStore, scope KeyScope, name string, readOnly bool) (APIKey, string, error) {
	k, tok := NewAPIKey(scope, name, readOnly, Now())
	if err := st.CreateAPIKey(ctx, k, HashAPIKeyToken(tok)); err != nil {
		return APIKey{}, "", fmt.Errorf("create API key: %w", err)
	}
	return k, tok, nil
}

// NewAPIKeyToken returns a fresh random token: the prefix and 32 random
// bytes, URL-safe.
func NewAPIKeyToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// HashAPIKeyToken is what a store keeps of a token and looks it up by. The
// tokens carry 256 random bits, so a plain SHA-256 cannot be reversed by
// guessing.
func HashAPIKeyToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// APIKeyStore keeps API keys. Keys belong to no scope: managing them is an
// administrator's work (imprint keys, on the machine holding the store).
type APIKeyStore interface {
	// CreateAPIKey stores k with the hash of its token. The id must be new
	// (ErrConflict otherwise).
	CreateAPIKey(ctx context.Context, k APIKey, tokenHash []byte) error
	// APIKeyByTokenHash returns the key whose token hashes to h, revoked or
	// not; ErrNotFound when there is none.
	APIKeyByTokenHash(ctx context.Context, h []byte) (APIKey, error)
	// ListAPIKeys returns every key, oldest first, revoked ones included.
	ListAPIKeys(ctx context.Context) ([]APIKey, error)
	// RevokeAPIKey marks the key revoked (once: revoking it again keeps the
	// first time) and returns it; ErrNotFound for an unknown id.
	RevokeAPIKey(ctx context.Context, id string, at Time) (APIKey, error)
	// HasAPIKeys reports whether any key was ever made, revoked or not:
	// from then on a service without an admin token requires a key.
	HasAPIKeys(ctx context.Context) (bool, error)
}
