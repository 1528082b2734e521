package sqlite

import (
	"database/sql"
	"testing"

	"github.com/imprint-dev/imprint/keyword"
)

// tokenTexts are texts whose token counts keyword.TokenCount and
// keyword.TrigramCount must agree with FTS5 on.
var tokenTexts = []string{
	"", "a_b", "ab__cd_", "abc123", "e\u0301t\u0301e", "中文 文字", "x²", "3.5", "ǅungla", "ab\u200dcd",
	"a\u00adb", "Ⅻ x", "hello world hello", "update_reservation_baggages 8 May 2023 Monday", "café naïve",
	"Привет, мир", "中文字\n日本語", "哈哈哈哈哈", "ab", "\ue000x", "tab\tsep\nline", "é\xff",
}

// TestTokenCountsMatchFTS5 checks keyword.TokenCount against the column
// sizes FTS5's unicode61 tokenizer records (the document length of its
// bm25), and TrigramCount against the trigram tokenizer's, for IndexTexts'
// words and CJK runs of each text and for the raw texts.
func TestTokenCountsMatchFTS5(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		`CREATE VIRTUAL TABLE w USING fts5 (text, tokenize = 'porter unicode61', content = '', contentless_delete = 1)`,
		`CREATE VIRTUAL TABLE g USING fts5 (text, tokenize = 'trigram', content = '', contentless_delete = 1)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	size := func(table, text string) int {
		t.Helper()
		if _, err := db.Exec(`DELETE FROM ` + table); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO `+table+` (rowid, text) VALUES (1, ?)`, text); err != nil {
			t.Fatal(err)
		}
		var sz []byte
		if err := db.QueryRow(`SELECT sz FROM ` + table + `_docsize WHERE id = 1`).Scan(&sz); err != nil {
			t.Fatal(err)
		}
		n, _ := uvarint(sz)
		return int(n)
	}
	for _, s := range tokenTexts {
		words, cjk := keyword.IndexTexts(s)
		for _, text := range []string{s, words} {
			if got, want := keyword.TokenCount(text), size("w", text); got != want {
				t.Errorf("TokenCount(%q) = %d, FTS5 unicode61 counts %d", text, got, want)
			}
		}
		if cjk != "" {
			if got, want := keyword.TrigramCount(cjk), size("g", cjk); got != want {
				t.Errorf("TrigramCount(%q) = %d, FTS5 trigram counts %d", cjk, got, want)
			}
		}
	}
}
