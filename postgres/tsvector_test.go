package postgres

import (
	"bufio"
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/keyword"
)

// checkTSVectors asserts that the store's tsvector of each text (the words
// the keyword package makes of it) is the one the server computes.
func checkTSVectors(t *testing.T, db *DB, texts []string) {
	t.Helper()
	ctx := context.Background()
	var words []string
	for _, s := range texts {
		w, _ := keyword.IndexTexts(s)
		words = append(words, w)
	}
	// Twice: the second time every chunk is cached.
	for pass := 0; pass < 2; pass++ {
		got, err := db.tsvectors(ctx, db.pool, words...)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.pool.Query(ctx, `SELECT to_tsvector('imprint', w)::text, l::tsvector::text
			FROM unnest($1::text[], $2::text[]) AS x(w, l)`, words, got)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for rows.Next() {
			var want, have string
			if err := rows.Scan(&want, &have); err != nil {
				t.Fatal(err)
			}
			if want != have {
				t.Errorf("pass %d, text %.80q: tsvector\n%.300s\nwant\n%.300s", pass, texts[i], have, want)
			}
			i++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTSVectorsMatchServer checks the tsvectors the store assembles from
// cached chunks against to_tsvector on every line of the test data and on
// texts at the tsvector's limits.
func TestTSVectorsMatchServer(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	texts := []string{
		"", "   ", "___", "a", "The running runners ran; they run.",
		"snake_case_name and CamelCase2Words, v1.2.3 3.14 -5 +7 1e10 0x1F",
		"e-mail well-known state-of-the-art re-re-run", "don't won't it's O'Brien's \\ back\\slash",
		"café naïve Ångström straße ΑΒΓ δέλτα Москва", "e\u0301t\u0301e\u0301 combining",
		"中文检索 日本語の文章 한국어 텍스트 mixed中文words", "2023-05-08 08:30 May 8th, 2023",
		strings.Repeat("x", 3000) + " after a long word",
		strings.Repeat("same ", 400),
		strings.Repeat("w ", 17000) + "tail tail",
		strings.Repeat("alpha beta ", 9000),
	}
	for _, f := range []string{"locomo/locomo-2conv.json", "tau-bench/airline-40.json", "claude-code/representative_messages.jsonl",
		"claude-code/edge_cases.jsonl", "claude-code/session_b.jsonl"} {
		file, err := os.Open(filepath.Join(testfiles.Dir(), f))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			// Long JSON files are one line: split at their strings.
			for _, s := range strings.Split(sc.Text(), `","`) {
				texts = append(texts, s)
			}
		}
		file.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	checkTSVectors(t, db, texts)
}

// TestSortLexPos checks the key-first sort against plain byte order on
// lexemes that share their first eight bytes, are shorter than eight, or
// are copies of one another (a chunk cached before the cache was emptied).
func TestSortLexPos(t *testing.T) {
	t.Parallel()
	texts := []string{"abcdefgh", "abcdefghi", "abcdefgh\u00e9", "abcdefg", "abcdefgha", "b", "a", "abcdefghij", "abcdefghi\xff", "\xffz"}
	interned := map[string]*lexeme{}
	var ents []lexPos
	for i := 0; i < 200; i++ {
		// Even entries share the interned lexeme, odd ones have a copy.
		text := texts[(i*7)%len(texts)]
		lx := interned[text]
		if lx == nil || i%2 == 1 {
			lx = newLexeme(text)
			interned[text] = lx
		}
		ents = append(ents, lexPos{lx, lx.key, (i * 13) % 50})
	}
	want := slices.Clone(ents)
	slices.SortFunc(want, func(x, y lexPos) int {
		if c := strings.Compare(x.lex.text, y.lex.text); c != 0 {
			return c
		}
		return cmp.Compare(x.pos, y.pos)
	})
	sortLexPos(ents)
	for i := range ents {
		if ents[i].lex.text != want[i].lex.text || ents[i].pos != want[i].pos {
			t.Fatalf("entry %d: %q at %d, want %q at %d", i, ents[i].lex.text, ents[i].pos, want[i].lex.text, want[i].pos)
		}
	}
}

// FuzzTSVectors checks the assembled tsvector of any text against the
// server's.
func FuzzTSVectors(f *testing.F) {
	for _, s := range []string{"The running runners", "snake_case 3.14", "中文检索 mixed", "don't \\ 'q'"} {
		f.Add(s)
	}
	db := openTemp(f)
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			return // text columns hold no NUL; the keyword package drops it anyway
		}
		checkTSVectors(t, db, []string{s})
	})
}

// BenchmarkSortLexPos sorts the words of each line of the shipped LoCoMo
// conversations, as lexemes with their positions, by sortLexPos (key) and
// by byte order alone (bytes), the comparison it replaced.
func BenchmarkSortLexPos(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(testfiles.Dir(), "locomo/locomo-2conv.json"))
	if err != nil {
		b.Fatal(err)
	}
	interned := map[string]*lexeme{}
	var texts [][]lexPos
	for _, s := range strings.Split(string(data), `","`) {
		w, _ := keyword.IndexTexts(s)
		var ents []lexPos
		for i, f := range strings.Fields(w) {
			lx := interned[f]
			if lx == nil {
				lx = newLexeme(f)
				interned[f] = lx
			}
			ents = append(ents, lexPos{lx, lx.key, i + 1})
		}
		texts = append(texts, ents)
	}
	bytesOrder := func(ents []lexPos) {
		slices.SortFunc(ents, func(x, y lexPos) int {
			if x.lex != y.lex {
				if c := strings.Compare(x.lex.text, y.lex.text); c != 0 {
					return c
				}
			}
			return cmp.Compare(x.pos, y.pos)
		})
	}
	for _, c := range []struct {
		name string
		sort func([]lexPos)
	}{{"key", sortLexPos}, {"bytes", bytesOrder}} {
		b.Run(c.name, func(b *testing.B) {
			work := make([][]lexPos, len(texts))
			for b.Loop() {
				b.StopTimer()
				for i, t := range texts {
					work[i] = append(work[i][:0], t...)
				}
				b.StartTimer()
				for _, w := range work {
					c.sort(w)
				}
			}
		})
	}
}
