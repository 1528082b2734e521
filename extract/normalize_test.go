package extract

import (
	"strings"
	"testing"
	"unicode"
)

func TestNormalizeText(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"The user likes tea.", "the user likes tea"},
		{"  the USER   likes\n\ttea!!! ", "the user likes tea"},
		{"“The user likes tea”", "the user likes tea"},
		{"用户喜欢喝绿茶。", "用户喜欢喝绿茶"},
		{"Ｔｈｅ　ｕｓｅｒ likes tea", "the user likes tea"},
		{"Uses C++", "uses c"},
		{"...", ""},
		{"Version 1.2 ships", "version 1.2 ships"},
	}
	for _, tt := range tests {
		if got := NormalizeText(tt.in); got != tt.want {
			t.Errorf("NormalizeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestContentHashEqualForSameNormalizedText(t *testing.T) {
	t.Parallel()
	a, b := ContentHash("The user likes tea."), ContentHash("the user  likes TEA")
	if a != b {
		t.Errorf("hashes differ for texts that normalize equally: %s vs %s", a, b)
	}
	if len(a) != 64 {
		t.Errorf("hash %q is not hex sha256", a)
	}
	if ContentHash("The user likes coffee") == a {
		t.Error("different texts hash equally")
	}
}

func BenchmarkContentHash(b *testing.B) {
	s := "The user moved from Berlin to Munich in April 2026 and now works at a small bakery. 用户喜欢喝绿茶。"
	for b.Loop() {
		ContentHash(s)
	}
}

// foldTextByRune is foldText's definition, a rune at a time: the oracle
// for its ASCII fast path.
func foldTextByRune(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
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

// FuzzFoldText: foldText gives what folding a rune at a time gives, on
// any text (ASCII and not, spaces of every kind, invalid UTF-8).
func FuzzFoldText(f *testing.F) {
	for _, s := range []string{"", " Hello\tWORLD\r\n", "ＡＢＣ　ｄｅｆ", "\u212aelvin İ ß", "a\x85b\u00a0c\v\fd", "bad \xff\xfe", "中文 Mixed ASCII"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := foldText(s), foldTextByRune(s); got != want {
			t.Fatalf("foldText(%q) = %q, rune by rune %q", s, got, want)
		}
	})
}
