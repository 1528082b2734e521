package imprint

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestJobKeysOfLookAlikeScopes: the pairs of issue 11 whose job keys were
// equal, when parts were joined unescaped, have distinct keys.
func TestJobKeysOfLookAlikeScopes(t *testing.T) {
	ag := Scope{Tenant: "t", User: "u", Agent: "ag"}
	agd := Scope{Tenant: "t", User: "u", Agent: "ag:d"}
	x := Scope{Tenant: "t", User: "u", Agent: "x"}
	xa := Scope{Tenant: "t", User: "u", Agent: "x:a"}
	slash := Scope{Tenant: "t/u", User: "v", Agent: "w"}
	slash2 := Scope{Tenant: "t", User: "u/v", Agent: "w"}
	for _, c := range []struct{ name, a, b string }{
		{"capture", CaptureJobKey(ag, "d:EPD"), CaptureJobKey(agd, "EPD")},
		{"extract", ExtractJobKey(x, "a:b"), ExtractJobKey(xa, "b")},
		{"extract slash", ExtractJobKey(slash, "s"), ExtractJobKey(slash2, "s")},
		{"embed", EmbedJobKey(slash), EmbedJobKey(slash2)},
		{"scope", slash.String(), slash2.String()},
		{"escape itself", ExtractJobKey(x, "a%3Ab"), ExtractJobKey(x, "a:b")},
	} {
		if c.a == c.b {
			t.Errorf("%s: two distinct (scope, id) share the key %q", c.name, c.a)
		}
	}
}

// TestKeysOfPlainPartsUnchanged: parts without special bytes give the keys
// earlier versions made, so stored keys and derived ids stay valid.
func TestKeysOfPlainPartsUnchanged(t *testing.T) {
	s := Scope{Tenant: "acme", User: "alice", Agent: "claude-code"}
	for _, c := range []struct{ got, want string }{
		{ExtractJobKey(s, "s1"), "extract:acme/alice/claude-code:s1"},
		{CaptureJobKey(s, "0196f7c1-7a4e-7b2c-9d3e-2f1a0b9c8d7e"), "capture:acme/alice/claude-code:0196f7c1-7a4e-7b2c-9d3e-2f1a0b9c8d7e"},
		{EmbedJobKey(s), "embed:acme/alice/claude-code"},
		{s.String(), "acme/alice/claude-code"},
		{ScopedKey("k", s, "conv 26", "session_1"), "k:acme/alice/claude-code:conv 26:session_1"},
		{string(AppendKeyParts(nil, 0, "a", "50% off: a/b", "")), "a\x0050% off: a/b\x00\x00"},
		{string(AppendKeyParts(nil, 0x1f, "a", "b\x00c")), "a\x1fb\x00c\x1f"},
	} {
		if c.got != c.want {
			t.Errorf("key = %q, want %q", c.got, c.want)
		}
	}
}

func TestKeyPartEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"":          "",
		"plain":     "plain",
		"ag:d":      "ag%3Ad",
		"a/b":       "a%2Fb",
		"50%":       "50%25",
		"nul\x00":   "nul%00",
		"del\x7f":   "del%7F",
		"tab\tnl\n": "tab%09nl%0A",
		"héllo":     "héllo",
	} {
		if got := KeyPart(in); got != want {
			t.Errorf("KeyPart(%q) = %q, want %q", in, got, want)
		}
	}
	if got := string(AppendKeyParts(nil, 0, "a\x00", "\x10b")); got != "a\x10@\x00\x10Pb\x00" {
		t.Errorf("AppendKeyParts = %q", got)
	}
}

// splitKey undoes ScopedKey: the kind, the scope's three parts and the
// other parts, unescaped.
func splitKey(t *testing.T, key string) []string {
	t.Helper()
	var out []string
	fields := strings.Split(key, ":")
	if len(fields) < 2 {
		t.Fatalf("key %q has no scope", key)
	}
	scope := strings.Split(fields[1], "/")
	if len(scope) != 3 {
		t.Fatalf("scope of key %q has %d parts", key, len(scope))
	}
	for _, p := range append(append(fields[:1:1], scope...), fields[2:]...) {
		var b strings.Builder
		for i := 0; i < len(p); i++ {
			if p[i] != '%' {
				b.WriteByte(p[i])
				continue
			}
			n, err := strconv.ParseUint(p[i+1:i+3], 16, 8)
			if err != nil {
				t.Fatalf("bad escape in %q: %v", key, err)
			}
			b.WriteByte(byte(n))
			i += 2
		}
		out = append(out, b.String())
	}
	return out
}

// splitHashInput undoes AppendKeyParts with separator sep.
func splitHashInput(t *testing.T, in []byte, sep byte) []string {
	t.Helper()
	var out []string
	var cur []byte
	for i := 0; i < len(in); i++ {
		switch c := in[i]; {
		case c == sep:
			out = append(out, string(cur))
			cur = nil
		case c == KeyEscape:
			i++
			if i == len(in) || (in[i] != sep+0x40 && in[i] != KeyEscape+0x40) {
				t.Fatalf("bad escape in %q", in)
			}
			cur = append(cur, in[i]-0x40)
		default:
			cur = append(cur, c)
		}
	}
	if len(cur) > 0 {
		t.Fatalf("unterminated part in %q", in)
	}
	return out
}

// FuzzKeyParts: two distinct lists of parts never encode equal, as a key
// (ScopedKey) or as hash input (AppendKeyParts with either
// separator in use), each encoding reads back to its parts, and a part
// without special bytes is written as it is.
func FuzzKeyParts(f *testing.F) {
	f.Add("ag", "d:EPD", "", "ag:d", "EPD", "", uint8(2), uint8(2))
	f.Add("x", "a:b", "", "x:a", "b", "", uint8(2), uint8(2))
	f.Add("a\x00", "b", "c", "a", "\x00b", "c", uint8(3), uint8(3))
	f.Add("a\x10", "@", "", "a", "\x00", "", uint8(2), uint8(2))
	f.Add("", "", "", "", "", "", uint8(0), uint8(1))
	f.Add("50%", "3A", "", "50:", "", "", uint8(2), uint8(1))
	f.Fuzz(func(t *testing.T, a0, a1, a2, b0, b1, b2 string, na, nb uint8) {
		a := []string{a0, a1, a2}[:1+int(na)%3]
		b := []string{b0, b1, b2}[:1+int(nb)%3]
		same := slices.Equal(a, b)
		// The lists as the parts after a scope, and the whole of a key.
		sc := Scope{Tenant: b0, User: "u", Agent: a0}
		if ka, kb := ScopedKey("k", sc, a...), ScopedKey("k", sc, b...); (ka == kb) != same {
			t.Errorf("ScopedKey(%q) = %q, ScopedKey(%q) = %q", a, ka, b, kb)
		}
		if got, want := splitKey(t, ScopedKey(a0, Scope{Tenant: a1, User: a2, Agent: b0}, b...)), append([]string{a0, a1, a2, b0}, b...); !slices.Equal(got, want) {
			t.Errorf("ScopedKey of %q reads back as %q", want, got)
		}
		for _, sep := range []byte{0, 0x1f} {
			ha, hb := AppendKeyParts(nil, sep, a...), AppendKeyParts(nil, sep, b...)
			if bytes.Equal(ha, hb) != same {
				t.Errorf("AppendKeyParts(%#x, %q) = %q, of %q = %q", sep, a, ha, b, hb)
			}
			if got := splitHashInput(t, ha, sep); !slices.Equal(got, a) {
				t.Errorf("AppendKeyParts(%#x, %q) reads back as %q", sep, a, got)
			}
		}
		// A scope and an id, or a scope and nothing, as the job keys use them.
		sa := Scope{Tenant: a0, User: a1, Agent: a2}
		sb := Scope{Tenant: b0, User: b1, Agent: b2}
		ida, idb := b[len(b)-1], a[len(a)-1]
		if ka, kb := CaptureJobKey(sa, ida), CaptureJobKey(sb, idb); (ka == kb) != (sa == sb && ida == idb) {
			t.Errorf("CaptureJobKey(%+v, %q) = %q, of (%+v, %q) = %q", sa, ida, ka, sb, idb, kb)
		}
		if ka, kb := EmbedJobKey(sa), EmbedJobKey(sb); (ka == kb) != (sa == sb) {
			t.Errorf("EmbedJobKey(%+v) = %q, of %+v = %q", sa, ka, sb, kb)
		}
		for _, p := range []string{a0, b0} {
			if !strings.ContainsAny(p, "%:/\x7f") && !strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 }) && KeyPart(p) != p {
				t.Errorf("KeyPart(%q) = %q, want it unchanged", p, KeyPart(p))
			}
			if !strings.ContainsAny(p, "\x00\x10") && string(AppendKeyPart(nil, 0, p)) != p {
				t.Errorf("AppendKeyPart(%q) = %q, want it unchanged", p, AppendKeyPart(nil, 0, p))
			}
		}
	})
}

// TestMessageIDsOfPlainAndLookAlikeParts: an id-less message or live turn
// keeps the id earlier versions derived (recording or posting it again is
// idempotent across versions), and two whose parts only look alike when
// joined get distinct ids.
func TestMessageIDsOfPlainAndLookAlikeParts(t *testing.T) {
	ts, err := ParseTime("2026-01-02T03:04:05Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		scope            Scope
		session, content string
		rank0, rank1     string
	}{
		{Scope{Tenant: "t", User: "u", Agent: "ag:d"}, "a:b", "50% off: a/b", "b27f2e089f440d3584a7292e", "acad16b4e7d15af1aaa85e54"},
		{Scope{Tenant: "t", User: "u", Agent: "a"}, "s1", "hi", "a962871ff4647a48721ecc35", "6dee72fb737cf9d9d34c1539"},
	} {
		key := MessageKey(c.scope, c.session, RoleUser, ts, c.content)
		if got := RankedID(key, 0); got != c.rank0 {
			t.Errorf("id of %q in %q = %s, want %s as before", c.content, c.session, got, c.rank0)
		}
		if got := RankedID(key, 1); got != c.rank1 {
			t.Errorf("id of the second identical %q = %s, want %s as before", c.content, got, c.rank1)
		}
	}
	for _, p := range []struct {
		a, b   Scope
		sa, sb string
	}{
		{Scope{Tenant: "t", User: "u", Agent: "x\x00"}, Scope{Tenant: "t", User: "u", Agent: "x"}, "s", "\x00s"},
		{Scope{Tenant: "t", User: "u", Agent: "x"}, Scope{Tenant: "t", User: "u", Agent: "x"}, "a\x00b", "a"},
	} {
		if a, b := RankedID(MessageKey(p.a, p.sa, RoleUser, ts, "hi"), 0), RankedID(MessageKey(p.b, p.sb, RoleUser, ts, "hi"), 0); a == b {
			t.Errorf("messages of session %q in %+v and %q in %+v share the id %s", p.sa, p.a, p.sb, p.b, a)
		}
	}
}
