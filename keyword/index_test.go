package keyword

import (
	"strings"
	"testing"
)

func TestIndexTexts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, words, cjk string }{
		{"hello, world!", "hello world", ""},
		{"  snake_case,x-y  9 ", "snake_case x y 9 xy", ""},
		{"running to de-stress, a self-care day-to-day - ok -no", "running to de stress a self care day to day ok no destress selfcare daytoday", ""},
		{"e-mail 北京-上海", "e mail 北京 上海 email", ""},
		{"!!!", "", ""},
		{"", "", ""},
		{"北京", "北京", ""},
		{"我在北京", "我在 在北 北京", "我在北京"},
		{"AI 在 北京 ok", "AI 北京 ok", ""},
		{"東京タワー", "東京 京タ タワ ワー", "東京タワー"},
		{"서울 여행", "서울 여행", ""},
		{"the 向量数据库 and 中文全文", "the 向量 量数 数据 据库 and 中文 文全 全文", "向量数据库\n中文全文"},
	} {
		words, cjk := IndexTexts(tc.in)
		if words != tc.words || cjk != tc.cjk {
			t.Errorf("IndexTexts(%q) = %q, %q; want %q, %q", tc.in, words, cjk, tc.words, tc.cjk)
		}
	}
}

// FuzzIndexTextsASCII checks the 7-bit fast path against the general
// tokenizer on every input.
func FuzzIndexTextsASCII(f *testing.F) {
	for _, s := range []string{"hello, world!", "a_b c-d", "", " x ", "tool_use: Bash(ls -la)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !isASCII(s) {
			return
		}
		var want []string
		for _, tk := range Tokenize(s) {
			want = append(want, tk.Text)
		}
		if got := asciiWords(s); got != strings.Join(want, " ") {
			t.Fatalf("asciiWords(%q) = %q, want %q", s, got, strings.Join(want, " "))
		}
	})
}
