package sqlite

import (
	"database/sql"
	"testing"
	"unicode"

	"github.com/imprint-dev/imprint/keyword"
)

// tokenTexts are texts whose token counts keyword.TokenCount and
// keyword.TrigramCount must agree with FTS5 on.
var tokenTexts = []string{
	"", "a_b", "ab__cd_", "abc123", "e\u0301t\u0301e", "中文 文字", "x²", "3.5", "ǅungla", "ab\u200dcd",
	"a\u00adb", "Ⅻ x", "hello world hello", "update_reservation_baggages 8 May 2023 Monday", "café naïve",
	"Привет, мир", "中文字\n日本語", "哈哈哈哈哈", "ab", "\ue000x", "tab\tsep\nline", "é\xff",
}

// ftsSizes is an in-memory database with an FTS5 table of each tokenizer
// the stores' keyword indexes use, measuring a text's token count.
type ftsSizes struct {
	t  testing.TB
	db *sql.DB
}

func newFTSSizes(t testing.TB) ftsSizes {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		`CREATE VIRTUAL TABLE w USING fts5 (text, tokenize = 'porter unicode61', content = '', contentless_delete = 1)`,
		`CREATE VIRTUAL TABLE g USING fts5 (text, tokenize = 'trigram', content = '', contentless_delete = 1)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return ftsSizes{t, db}
}

// size is the number of tokens FTS5 records for text in table (w or g).
func (f ftsSizes) size(table, text string) int {
	f.t.Helper()
	if _, err := f.db.Exec(`DELETE FROM ` + table); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.db.Exec(`INSERT INTO `+table+` (rowid, text) VALUES (1, ?)`, text); err != nil {
		f.t.Fatal(err)
	}
	var sz []byte
	if err := f.db.QueryRow(`SELECT sz FROM ` + table + `_docsize WHERE id = 1`).Scan(&sz); err != nil {
		f.t.Fatal(err)
	}
	n, _ := uvarint(sz)
	return int(n)
}

// checkTokenCounts compares keyword.TokenCount and TrigramCount with FTS5
// on IndexTexts' words and CJK runs of s, what the stores index.
func (f ftsSizes) checkTokenCounts(s string) {
	f.t.Helper()
	words, cjk := keyword.IndexTexts(s)
	if got, want := keyword.TokenCount(words), f.size("w", words); got != want {
		f.t.Errorf("TokenCount(%q) = %d, FTS5 unicode61 counts %d", words, got, want)
	}
	if cjk != "" {
		if got, want := keyword.TrigramCount(cjk), f.size("g", cjk); got != want {
			f.t.Errorf("TrigramCount(%q) = %d, FTS5 trigram counts %d", cjk, got, want)
		}
	}
}

// TestTokenCountsMatchFTS5 checks keyword.TokenCount against the column
// sizes FTS5's unicode61 tokenizer records (the document length of its
// bm25), and TrigramCount against the trigram tokenizer's, for IndexTexts'
// words and CJK runs of each text.
func TestTokenCountsMatchFTS5(t *testing.T) {
	f := newFTSSizes(t)
	for _, s := range tokenTexts {
		f.checkTokenCounts(s)
	}
}

// fuzzScripts are the characters FuzzTokenCount's texts are made of:
// ASCII and Latin-1, Latin, Greek and Cyrillic letters, combining
// diacritics, CJK, kana and Hangul, and the separators between them.
var fuzzScripts = []*unicode.RangeTable{unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Han, unicode.Hiragana,
	unicode.Katakana, unicode.Hangul, unicode.Common, {R16: []unicode.Range16{{Lo: 0x300, Hi: 0x36f, Stride: 1}}}}

// FuzzTokenCount checks keyword.TokenCount and TrigramCount against FTS5
// on texts of fuzzScripts.
func FuzzTokenCount(f *testing.F) {
	for _, s := range tokenTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range s {
			if !unicode.In(r, fuzzScripts...) {
				return // SQLite's Unicode tables may class it otherwise
			}
		}
		newFTSSizes(t).checkTokenCounts(s)
	})
}
