package clitext

import (
	"bytes"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestManageAndKeyLines: what the memory and key commands print names the
// ids, the counts in words, the token once and when a key was revoked.
func TestManageAndKeyLines(t *testing.T) {
	at := mustTime(t, "2026-03-04T05:06:07Z")
	k, tok := imprint.NewAPIKey(imprint.KeyScope{Tenant: "acme"}, "laptop", true, at)
	var b bytes.Buffer
	if err := KeyCreated(&b, k, tok); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "created "+k.ID+" (laptop)") || !strings.Contains(s, "read-only") || !strings.HasSuffix(s, "keep it secret): "+tok+"\n") {
		t.Errorf("KeyCreated = %q", s)
	}
	b.Reset()
	k.RevokedAt = &at
	if err := KeyRevoked(&b, k); err != nil {
		t.Fatal(err)
	}
	if s, want := b.String(), "revoked "+k.ID+" (laptop) at 2026-03-04 05:06:07\n"; s != want {
		t.Errorf("KeyRevoked = %q, want %q", s, want)
	}
	for n, want := range map[int]string{0: "forgot 0 memories\n", 1: "forgot 1 memory\n", 3: "forgot 3 memories\n"} {
		b.Reset()
		if err := ForgotMany(&b, n); err != nil || b.String() != want {
			t.Errorf("ForgotMany(%d) = %q, %v; want %q", n, b.String(), err, want)
		}
	}
	sup := "m2"
	b.Reset()
	d := imprint.MemoryDetail{Memory: imprint.Memory{ID: "m1", Content: "Mara lives in Porto", SupersededBy: &sup}}
	if err := MemoryDetail(&b, d); err != nil || !strings.Contains(b.String(), "superseded by m2") || !strings.Contains(b.String(), "session none") {
		t.Errorf("MemoryDetail = %q, %v", b.String(), err)
	}
}
