package storetest

import (
	"bytes"
	"context"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// testAPIKeys: a key is found by its token's hash only, listed without
// it, and stays found once revoked (so the server can tell "revoked" from
// "unknown"); revoking twice keeps the first time.
func testAPIKeys(t *testing.T, s imprint.ServiceStore) {
	ctx := context.Background()
	if has, err := s.HasAPIKeys(ctx); err != nil || has {
		t.Fatalf("empty store HasAPIKeys = %v, %v; want false", has, err)
	}
	tok := imprint.NewAPIKeyToken()
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := imprint.At(t0)
	hour := imprint.At(t0.Add(time.Hour))
	k := imprint.APIKey{ID: "key_a", Name: "ci", Scope: imprint.KeyScope{Tenant: "acme", Agent: "claude"}, ReadOnly: true, CreatedAt: at}
	must(t, s.CreateAPIKey(ctx, k, imprint.HashAPIKeyToken(tok)))
	wantErr(t, "CreateAPIKey with a used id", s.CreateAPIKey(ctx, k, imprint.HashAPIKeyToken(imprint.NewAPIKeyToken())), imprint.ErrConflict)
	wantErr(t, "CreateAPIKey without tenant", s.CreateAPIKey(ctx, imprint.APIKey{ID: "key_b"}, []byte{1}), imprint.ErrInvalid)
	must(t, s.CreateAPIKey(ctx, imprint.APIKey{ID: "key_c", Scope: imprint.KeyScope{Tenant: "beta"}, CreatedAt: imprint.At(t0.Add(time.Second))},
		imprint.HashAPIKeyToken(imprint.NewAPIKeyToken())))

	got, err := s.APIKeyByTokenHash(ctx, imprint.HashAPIKeyToken(tok))
	must(t, err)
	if got.ID != "key_a" || got.Scope != k.Scope || !got.ReadOnly || got.Name != "ci" || !got.CreatedAt.Equal(t0) || got.RevokedAt != nil {
		t.Errorf("APIKeyByTokenHash = %+v, want %+v", got, k)
	}
	_, err = s.APIKeyByTokenHash(ctx, imprint.HashAPIKeyToken(tok+"x"))
	wantErr(t, "APIKeyByTokenHash of another token", err, imprint.ErrNotFound)
	if has, err := s.HasAPIKeys(ctx); err != nil || !has {
		t.Fatalf("HasAPIKeys = %v, %v; want true", has, err)
	}

	rev, err := s.RevokeAPIKey(ctx, "key_a", hour)
	must(t, err)
	if rev.RevokedAt == nil || !rev.RevokedAt.Equal(hour.Time) {
		t.Errorf("revoked key = %+v, want revoked_at %v", rev, hour)
	}
	again, err := s.RevokeAPIKey(ctx, "key_a", imprint.At(t0.Add(2*time.Hour)))
	must(t, err)
	if again.RevokedAt == nil || !again.RevokedAt.Equal(hour.Time) {
		t.Errorf("second revoke moved revoked_at to %v", again.RevokedAt)
	}
	_, err = s.RevokeAPIKey(ctx, "key_nope", at)
	wantErr(t, "RevokeAPIKey of an unknown id", err, imprint.ErrNotFound)
	if got, err := s.APIKeyByTokenHash(ctx, imprint.HashAPIKeyToken(tok)); err != nil || got.RevokedAt == nil {
		t.Errorf("revoked key by hash = %+v, %v; want it, revoked", got, err)
	}

	list, err := s.ListAPIKeys(ctx)
	must(t, err)
	if len(list) != 2 || list[0].ID != "key_a" || list[1].ID != "key_c" {
		t.Fatalf("ListAPIKeys = %+v, want key_a then key_c", list)
	}
	_, _ = s.RevokeAPIKey(ctx, "key_c", at)
	if has, err := s.HasAPIKeys(ctx); err != nil || !has {
		t.Errorf("HasAPIKeys with every key revoked = %v, %v; want true (revoking must not open the service)", has, err)
	}
	if bytes.Contains([]byte(list[0].Name+list[0].ID), []byte(tok)) {
		t.Errorf("a listing carries the token")
	}
}
