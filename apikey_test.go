package imprint

import (
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
