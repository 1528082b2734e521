package postgres

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint/internal/pgtest"
	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/keyword"
)

// porterVocabulary is the words TestPorterMatchesServer stems both ways:
// every word of letters in the test data, capitalized too; every word of
// one to three letters; the classic examples of each of Porter's steps;
// and a sample of the test data's words with each suffix the steps know
// appended.
func porterVocabulary(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	var data []string
	err := filepath.WalkDir(testfiles.Dir(), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, tok := range keyword.Tokenize(string(b)) {
			if _, ok := localLexeme(tok.Text); ok || onlyLetters(tok.Text) {
				data = append(data, tok.Text)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range data {
		add(w)
		add(strings.ToUpper(w[:1]) + w[1:])
	}
	const abc = "abcdefghijklmnopqrstuvwxyz"
	for _, a := range abc {
		add(string(a))
		for _, b := range abc {
			add(string(a) + string(b))
			for _, c := range abc {
				add(string(a) + string(b) + string(c))
			}
		}
	}
	for _, w := range strings.Fields(`caresses ponies ties caress cats feed agreed plastered bled
		motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing filing
		happy sky relational conditional rational valenci hesitanci digitizer conformabli radicalli
		differentli vileli analogousli vietnamization predication operator feudalism decisiveness
		hopefulness callousness formaliti sensitiviti sensibiliti triplicate formative formalize
		electriciti electrical hopeful goodness revival allowance inference airliner gyroscopic
		adjustable defensible irritant replacement adjustment dependent adoption homologou communism
		activate angulariti homologous effective bowdlerize probate rate cease controll roll
		generalizations oscillators yes yellow sayings toying ayyy yyy boy boys enjoying obeyed
		syzygy crying flying spying dying eyed eyeing queueing abbess sion tion ion lion nation`) {
		add(w)
	}
	suffixes := slices.Concat(step2Suffixes, step3Suffixes, step4Suffixes,
		[]string{"s", "es", "ies", "sses", "ss", "ed", "eed", "ing", "y", "e", "le", "ll", "ated", "ating", "izing", "bled"})
	bases := data
	if len(bases) > 400 {
		bases = bases[:400]
	}
	for _, b := range bases {
		for _, s := range suffixes {
			add(strings.ToLower(b) + s)
		}
	}
	return out
}

// onlyLetters reports whether s is ASCII letters alone.
func onlyLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// TestPorterMatchesServer checks that every word the store stems itself
// (localLexeme) has the tsvector the server makes of it: one lexeme, the
// same, at position 1.
func TestPorterMatchesServer(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	if !db.lexemes.porter {
		t.Fatal("a new schema's dictionary was not taken for Porter's")
	}
	words := porterVocabulary(t)
	if len(words) < 30000 {
		t.Fatalf("only %d words to check", len(words))
	}
	rows, err := db.pool.Query(context.Background(), `SELECT w.o, COALESCE(array_agg(l.lexeme ORDER BY l.lexeme) FILTER (WHERE l.lexeme IS NOT NULL), '{}'),
			COALESCE(array_agg(array_to_string(l.positions, ',')) FILTER (WHERE l.lexeme IS NOT NULL), '{}')
		FROM unnest($1::text[]) WITH ORDINALITY AS w(t, o)
		LEFT JOIN LATERAL unnest(to_tsvector('imprint', w.t)) AS l ON true
		GROUP BY w.o ORDER BY w.o`, words)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	local, bad := 0, 0
	for rows.Next() {
		var o int
		var lexemes, positions []string
		if err := rows.Scan(&o, &lexemes, &positions); err != nil {
			t.Fatal(err)
		}
		w := words[o-1]
		got, ok := localLexeme(w)
		if !ok {
			if onlyLetters(w) && len(w) <= maxLocalStem {
				t.Errorf("%q: not stemmed here; the server makes %v", w, lexemes)
			}
			continue
		}
		local++
		if len(lexemes) != 1 || lexemes[0] != got || positions[0] != "1" {
			if bad++; bad <= 40 {
				t.Errorf("%q: stemmed here %q, the server makes %v at %v", w, got, lexemes, positions)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if bad > 0 {
		t.Errorf("%d of %d words stemmed differently", bad, local)
	}
	t.Logf("%d words, %d stemmed here", len(words), local)
}

// TestEnglishDictionaryLeftToServer checks that a schema whose dictionary
// kept Snowball's English stemmer (one that held records before migration
// 0009) gets the server's stems, not the store's Porter ones.
func TestEnglishDictionaryLeftToServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.Schema(t)
	db, err := Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	c := connectAt(t, u)
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `ALTER TEXT SEARCH DICTIONARY imprint_stem (Language = english)`); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.lexemes.porter {
		t.Fatal("the English dictionary was taken for Porter's")
	}
	// Words the two stemmers part (Porter: gener, hope, friendli).
	checkTSVectors(t, db, []string{"generalizations hopeful friendly flies", "Generalizations"})
}

// FuzzPorterStem checks that stemming any word of letters neither panics
// nor grows the word by more than a letter.
func FuzzPorterStem(f *testing.F) {
	for _, s := range []string{"", "y", "yyy", "caresses", "generalizations", "Ayyy", "ion"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := localLexeme(s)
		if ok && (len(got) == 0 || len(got) > len(s)+1) {
			t.Errorf("%q stems to %q", s, got)
		}
		if !ok && onlyLetters(s) && len(s) <= maxLocalStem {
			t.Errorf("%q was not stemmed", s)
		}
	})
}
