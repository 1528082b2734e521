package imprint

import (
	"slices"
	"strings"
)

// Keys and derived ids are made of several parts: a scope's tenant, user
// and agent, a session or episode id, a turn's time and text. Each part is
// escaped before the parts are joined, so that no two distinct lists of
// parts give the same key or hash input, whatever bytes the parts hold
// (an agent "ag:d" and an id "EPD" never meet an agent "ag" and an id
// "d:EPD"). Both encodings leave a part without special bytes as it is, so
// the keys and ids of such parts are the ones earlier versions made, and
// stores made by them stay valid.

// KeyEscape is the byte that starts an escape in the hash input written by
// AppendKeyPart: it is written, followed by the escaped byte plus 0x40, in
// place of itself and of the separator.
const KeyEscape byte = 0x10

// KeyPart returns s escaped to be one part of a text key: '%', the key
// separators ':' and '/', and the ASCII control bytes (below 0x20 and
// 0x7f) are written as '%' and two upper-case hex digits. Any other string
// is returned unchanged.
func KeyPart(s string) string {
	i := 0
	for i < len(s) && !keyEscaped(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if keyEscaped(c) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0x0f])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func keyEscaped(c byte) bool { return c == '%' || c == ':' || c == '/' || c < 0x20 || c == 0x7f }

// ScopedKey returns the key "kind:tenant/user/agent:part...": the kind, the
// scope as Scope.String writes it and each part, escaped by KeyPart and
// joined with ':'. Distinct (kind, scope, parts) give distinct keys.
func ScopedKey(kind string, scope Scope, parts ...string) string {
	kind, t, u, a := KeyPart(kind), KeyPart(scope.Tenant), KeyPart(scope.User), KeyPart(scope.Agent)
	n := len(kind) + len(t) + len(u) + len(a) + 3
	for _, p := range parts {
		n += len(p) + 1
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(kind)
	b.WriteByte(':')
	b.WriteString(t)
	b.WriteByte('/')
	b.WriteString(u)
	b.WriteByte('/')
	b.WriteString(a)
	for _, p := range parts {
		b.WriteByte(':')
		b.WriteString(KeyPart(p))
	}
	return b.String()
}

// AppendKeyPart appends part to dst with every sep and KeyEscape byte in it
// written as KeyEscape followed by the byte plus 0x40, so the result holds
// no sep byte. A part holding neither is appended unchanged. sep must be an
// ASCII control byte other than KeyEscape.
func AppendKeyPart(dst []byte, sep byte, part string) []byte {
	if sep >= 0x20 || sep == KeyEscape {
		panic("imprint: AppendKeyPart separator must be a control byte other than KeyEscape")
	}
	if strings.IndexByte(part, sep) < 0 && strings.IndexByte(part, KeyEscape) < 0 {
		return append(dst, part...)
	}
	start := 0
	for i := 0; i < len(part); i++ {
		if c := part[i]; c == sep || c == KeyEscape {
			dst = append(append(dst, part[start:i]...), KeyEscape, c+0x40)
			start = i + 1
		}
	}
	return append(dst, part[start:]...)
}

// AppendKeyParts appends each part, escaped by AppendKeyPart, followed by
// sep: the input of a hashed id. Distinct lists of parts give distinct
// bytes, and no list is a prefix of another's bytes unless it is a prefix
// of the list, so more input (a rank, say) may follow the last sep.
func AppendKeyParts(dst []byte, sep byte, parts ...string) []byte {
	n := len(parts)
	for _, p := range parts {
		n += len(p)
	}
	dst = slices.Grow(dst, n)
	for _, p := range parts {
		dst = append(AppendKeyPart(dst, sep, p), sep)
	}
	return dst
}

// MessageKey is what identifies an id-less message or live turn: who said
// what, when, in which session of which scope, each part escaped and ended
// by a NUL (AppendKeyParts).
func MessageKey(scope Scope, sessionID string, role Role, ts Time, content string) string {
	// The "" is where earlier versions put the scope's workspace, always
	// empty in practice: kept so ids stay the same, whatever the workspace.
	return string(AppendKeyParts(nil, 0, scope.Tenant, scope.User, scope.Agent, "", sessionID, string(role), ts.String(), content))
}
