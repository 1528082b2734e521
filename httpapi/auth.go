package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// principal is who made a request: the administrator (the server's token,
// or anyone while the service is open) or the holder of one API key.
type principal struct {
	// key is nil for the administrator.
	key *imprint.APIKey
}

type principalCtxKey struct{}

// principalOf returns the request's principal; a request that did not pass
// through ServeHTTP (a handler called directly) is the administrator.
func principalOf(r *http.Request) principal {
	p, _ := r.Context().Value(principalCtxKey{}).(principal)
	return p
}

// bearer returns the token of an "Authorization: Bearer <token>" header;
// the scheme is case-insensitive (RFC 9110 §11.1).
func bearer(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// authenticate tells who made r. The service is open — every request is
// the administrator's — only while it has no admin token and no API key was
// ever made; otherwise a request must carry the admin token or a live key.
// A valid key always binds its holder to the key's scope, open service or
// not.
func (s *Server) authenticate(r *http.Request) (principal, error) {
	tok, given := bearer(r)
	if !given {
		tok, given = viewerCookie(r)
	}
	if given && s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1 {
		return principal{}, nil
	}
	if given && strings.HasPrefix(tok, imprint.APIKeyPrefix) {
		k, err := s.d.Store.APIKeyByTokenHash(r.Context(), imprint.HashAPIKeyToken(tok))
		switch {
		case err == nil && k.RevokedAt != nil:
			return principal{}, unauthorized(fmt.Sprintf("api key %s was revoked", k.ID))
		case err == nil:
			return principal{key: &k}, nil
		case !errors.Is(err, imprint.ErrNotFound):
			return principal{}, fmt.Errorf("authenticate: %w", err)
		}
	}
	open, err := s.open(r.Context())
	if err != nil {
		return principal{}, err
	}
	if open {
		return principal{}, nil
	}
	if given {
		return principal{}, unauthorized("the bearer token is not the admin token or a known API key")
	}
	return principal{}, unauthorized("a valid Authorization: Bearer token is required")
}

// open reports whether the service takes requests without credentials: no
// admin token is set and no API key exists (a revoked one counts, so that
// revoking the last key does not open the service).
func (s *Server) open(ctx context.Context) (bool, error) {
	if s.cfg.Token != "" {
		return false, nil
	}
	has, err := s.d.Store.HasAPIKeys(ctx)
	if err != nil {
		return false, fmt.Errorf("authenticate: %w", err)
	}
	return !has, nil
}

// authorize checks what p may do before any handler runs: a read-only key
// only reads, and the metrics, which sum every tenant, are the
// administrator's. Scopes are checked where each handler reads its scope
// (scopeOf).
func (p principal) authorize(r *http.Request) error {
	if p.key == nil {
		return nil
	}
	// The MCP endpoint posts reads too: its tools refuse writes to a
	// read-only key (imprint.Caller.ReadOnly).
	if p.key.ReadOnly && r.Method != http.MethodGet && r.Method != http.MethodHead && r.URL.Path != mcpPath {
		return imprint.Forbiddenf("api key %s is read-only", p.key.ID)
	}
	if r.URL.Path == "/metrics" {
		return imprint.Forbiddenf("/metrics sums every tenant: it needs the admin token")
	}
	return nil
}

// restrict applies p's key to the scope a request asked for: a part the
// request left out is the key's, and a part outside the key is forbidden.
// given says which of tenant, user and agent the request named.
func (p principal) restrict(sc imprint.Scope, given [3]bool) (imprint.Scope, error) {
	if p.key == nil {
		return sc, nil
	}
	ks := p.key.Scope
	parts := []struct {
		name string
		key  string
		got  *string
	}{{"tenant", ks.Tenant, &sc.Tenant}, {"user", ks.User, &sc.User}, {"agent", ks.Agent, &sc.Agent}}
	for i, part := range parts {
		if part.key == "" {
			continue
		}
		if !given[i] {
			*part.got = part.key
			continue
		}
		if *part.got != part.key {
			return sc, imprint.Forbiddenf("api key %s does not cover %s %q", p.key.ID, part.name, *part.got)
		}
	}
	if !ks.Covers(sc) {
		return sc, imprint.Forbiddenf("api key %s does not cover scope %s", p.key.ID, sc)
	}
	return sc, nil
}
