package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// foldRune maps full-width ASCII variants and the ideographic space to their
// ASCII forms, the part of NFKC that matters for comparing memories typed on
// CJK keyboards; every other rune is lower-cased.
func foldRune(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		r -= 0xFEE0
	case r == 0x3000:
		r = ' '
	}
	return unicode.ToLower(r)
}

// foldText lower-cases s, folds full-width forms and collapses every run of
// white space into one space, trimming both ends.
func foldText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			// ASCII: lower-cased, no full-width form, the same spaces as
			// unicode.IsSpace's below U+0080.
			i++
			if c == ' ' || '\t' <= c && c <= '\r' {
				space = b.Len() > 0
				continue
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		r = foldRune(r)
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// NormalizeText returns the form of a memory's content used to detect exact
// duplicates: lower-cased, full-width characters folded to ASCII, white space
// collapsed, and punctuation and symbols trimmed from both ends, so
// "The user likes tea." and "the user likes tea" compare equal.
func NormalizeText(s string) string {
	trim := func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
	}
	return strings.TrimFunc(foldText(s), trim)
}

// ContentHash returns the hex SHA-256 of NormalizeText(s). Stores index it so
// the dedup pre-check is one lookup; changing NormalizeText changes every
// hash and requires recomputing the stored ones.
func ContentHash(s string) string {
	sum := sha256.Sum256([]byte(NormalizeText(s)))
	return hex.EncodeToString(sum[:])
}
