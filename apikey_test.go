package imprint

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestNewAPIKey: a new key carries what it was made with, an id listings
// can show and a token with the prefix; two keys share neither.
func TestNewAPIKey(t *testing.T) {
	t.Parallel()
	now := Time{time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)}
	ks := KeyScope{Tenant: "acme", User: "ann"}
	k, tok := NewAPIKey(ks, "laptop", true, now)
	if k.Scope != ks || k.Name != "laptop" || !k.ReadOnly || !k.CreatedAt.Equal(now.Time) || k.RevokedAt != nil {
		t.Errorf("key %+v: want scope %v, name laptop, read-only, made at %v, not revoked", k, ks, now)
	}
	if !regexp.MustCompile(`^key_[0-9a-f]{20}$`).MatchString(k.ID) {
		t.Errorf("id %q: want key_ and 20 hex digits", k.ID)
	}
	if !strings.HasPrefix(tok, APIKeyPrefix) || len(tok) != len(APIKeyPrefix)+43 {
		t.Errorf("token %q: want %s and 43 URL-safe characters", tok, APIKeyPrefix)
	}
	k2, tok2 := NewAPIKey(ks, "laptop", true, now)
	if k2.ID == k.ID || tok2 == tok {
		t.Errorf("two keys share an id (%s) or a token", k.ID)
	}
}

// TestKeyScopeOf: a key reaches what was asked for, part by part; a tenant
// is required and a part given blank is refused rather than read as "all".
func TestKeyScopeOf(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	for _, tt := range []struct {
		name                string
		tenant, user, agent *string
		want                KeyScope
		bad                 string
	}{
		{name: "tenant", tenant: s("acme"), want: KeyScope{Tenant: "acme"}},
		{name: "agent of a tenant", tenant: s("acme"), agent: s("bot"), want: KeyScope{Tenant: "acme", Agent: "bot"}},
		{name: "no tenant", user: s("ann"), bad: "--tenant"},
		{name: "blank tenant", tenant: s("  "), bad: "--tenant"},
		{name: "blank user", tenant: s("acme"), user: s(" "), bad: "--user"},
		{name: "blank agent", tenant: s("acme"), agent: s(""), bad: "--agent"},
		{name: "bad part", tenant: s("acme"), user: s("a\x01b"), bad: "scope.user"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := KeyScopeOf(tt.tenant, tt.user, tt.agent)
			if tt.bad != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("KeyScopeOf = %+v, %v; want ErrInvalid naming %s", got, err, tt.bad)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("KeyScopeOf = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
