package redact

import (
	"strings"
	"testing"
)

// TestStringLeavesNearMissesAlone lists text that looks like the new shapes
// but holds no secret.
func TestStringLeavesNearMissesAlone(t *testing.T) {
	t.Parallel()
	texts := []string{
		"SG.com and the SG. prefix of SendGrid keys",
		"do_v1_test and dop_v1_short are not tokens",
		"AccountKey=$AZURE_STORAGE_KEY is read from the environment",
		"sig=abc is too short to be a signature",
		"private_key_id is the field name; private_key_path = ./keys/dev.pem",
		"the password is incorrect, try again",
		"The password is case-sensitive and the password is Required.",
		"my password is in 1Password",
		"the reset password link is https://example.com/reset",
		"密码学是一门科学。忘记密码了怎么办？密码是多少？",
		"SKU-1234, AC/DC, ACME Corp and the SKIP list",
		"global glance glad gl-matrix glsa glc",
		"hvac service and hvs.short",
		"key-value stores and monkey-patching; key-0123",
		"order 4111111111111112 and invoice 5555 5555 5555 4445 failed the check",
		"epoch ms 1735689600000, pi 3.1415926535897932, phone +1 415 555 0132",
		"ISBN 978-0-306-40615-7 and tracking 1Z999AA10123456784",
		"card ending in 4242, expires 04/28",
		"chat 123456789:AAbb is short",
		"NOTE: ODD OTHER MTA NTP OD.x",
		"pull-request pul-123 dapi sbp_ CCIP NRAK dp.pt.config",
		"request id 123e4567-e89b-12d3-a456-426614174000 is fine",
		"commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 on main",
		"app_key_path=./app.key and application_key=${DD_APP_KEY}",
	}
	for _, s := range texts {
		if got, n := Count(s); got != s || n != 0 {
			t.Errorf("Count(%q) = %q, %d; want it unchanged", s, got, n)
		}
	}
}

// TestShapeCount keeps the corpus at the size the security requirement asks
// for: at least forty distinct shapes.
func TestShapeCount(t *testing.T) {
	t.Parallel()
	kinds := map[string]bool{}
	for _, tc := range secretCases() {
		kinds[tc.kind] = true
	}
	if n := len(secretCases()); n < 40 {
		t.Errorf("%d secret shapes, want at least 40", n)
	}
	if len(kinds) < 40 {
		t.Errorf("%d kinds of secret, want at least 40", len(kinds))
	}
	if !strings.Contains(String("x"), "x") {
		t.Fatal("String lost text")
	}
}

// TestSecretAfterAnUnclosedMarker: text that merely starts like a marker
// does not shield what follows it.
func TestSecretAfterAnUnclosedMarker(t *testing.T) {
	t.Parallel()
	key := "sk-" + "proj-" + "Ab3dEf6hIj9lMn2pQr5tUv8xYz1"
	tok := "f3a9c1e7" + "b2d4068a5c7e9f1b"
	if got := String("[REDACTED:my_token=" + tok); strings.Contains(got, tok) {
		t.Errorf("a token after an unclosed marker survived: %q", got)
	}
	for _, s := range []string{"[REDACTED:note " + key, "[REDACTED:" + key, "[REDACTED:x] " + key} {
		if got := String(s); strings.Contains(got, key) {
			t.Errorf("String(%q) = %q: the key survived", s, got)
		}
	}
}

// TestKindsFitMarkers: inMarker looks back maxKindLen bytes for a marker's
// start, so no kind may be longer.
func TestKindsFitMarkers(t *testing.T) {
	t.Parallel()
	for i := range rules {
		if len(rules[i].kind) > maxKindLen {
			t.Errorf("kind %q is longer than %d bytes", rules[i].kind, maxKindLen)
		}
	}
}
