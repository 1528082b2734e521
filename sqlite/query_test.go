package sqlite

import (
	"github.com/imprint-dev/imprint/internal/benchtext"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint/keyword"
)

func TestBuildQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want ftsQuery
	}{
		{"", ftsQuery{}},
		{"a I ! 的", ftsQuery{}},
		{"coffee", ftsQuery{words: `"coffee"`}},
		{"Coffee coffee COFFEE", ftsQuery{words: `"coffee"`}},
		{"black coffee", ftsQuery{words: `"black" OR "coffee"`}},
		{`coffee OR tea`, ftsQuery{words: `"coffee" OR "tea"`}},
		{`NEAR(coffee tea, 2)`, ftsQuery{words: `"near" OR "coffee" OR "tea" OR "2"`}},
		{"When did Caroline go to the support group?", ftsQuery{words: `"caroline" OR "go" OR "support" OR "group"`}},
		{"what is it", ftsQuery{words: `"what" OR "is" OR "it"`}}, // nothing but stop words: kept
		{"What did she do on 7 May?", ftsQuery{words: `"7" OR "may"`}},
		{"What is 北京?", ftsQuery{words: `"北京"`}},
		{`"quoted" -neg col:val *star ^x`, ftsQuery{words: `"quoted" OR "neg" OR "col" OR "val" OR "star"`}},
		{"AI ok", ftsQuery{words: `"ai"`}},
		{"北京", ftsQuery{words: `"北京"`}},
		{"向量数据库", ftsQuery{trigram: `"向量数据库"`}},
		{"去北京 出差", ftsQuery{trigram: `"去北京"`, words: `"出差"`}},
		{"Go语言tutorial", ftsQuery{words: `"go" OR "语言" OR "tutorial"`}},
		{"update_reservation_baggages", ftsQuery{words: `"update_reservation_baggages"`}},
		{"coffee\x00tea", ftsQuery{words: `"coffee" OR "tea"`}},
		{"café naïve", ftsQuery{words: `"café" OR "naïve"`}},
	} {
		if d := cmp.Diff(tc.want, buildQuery(tc.in), cmp.AllowUnexported(ftsQuery{})); d != "" {
			t.Errorf("buildQuery(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

func TestBuildQueryCapsTerms(t *testing.T) {
	t.Parallel()
	in := ""
	for i := range 200 {
		in += " w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	q := buildQuery(in)
	if n := len(splitOr(q.trigram)) + len(splitOr(q.words)); n != maxQueryTerms {
		t.Errorf("%d terms, want %d", n, maxQueryTerms)
	}
}

func splitOr(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i+4 <= len(s); i++ {
		if s[i:i+4] == " OR " {
			out = append(out, s[start:i])
			start = i + 4
		}
	}
	return append(out, s[start:])
}

// hyphenJoins is what indexTexts adds to the words of s for its
// hyphenated words: s with its hyphens as spaces has the same words and
// no hyphenated one.
func hyphenJoins(s string) string {
	words, _ := indexTexts(s)
	split, _ := indexTexts(strings.ReplaceAll(s, "-", " "))
	return strings.TrimPrefix(strings.TrimPrefix(words, split), " ")
}

// TestHyphenJoinsOnRealText compares hyphenJoins with a plain
// split-and-join over every real text of the test data: the same joined
// words, except that the plain one drops a compound glued to a stray
// hyphen ("-x-y"), which hyphenJoins keeps as "xy".
func TestHyphenJoinsOnRealText(t *testing.T) {
	t.Parallel()
	plain := func(s string) string {
		var out []string
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r != '-' && !keyword.IsWordRune(r) }) {
			f = strings.Trim(f, "-")
			parts := strings.Split(f, "-")
			ok := len(parts) > 1
			for _, p := range parts {
				ok = ok && p != "" && !strings.ContainsFunc(p, keyword.IsCJK)
			}
			if ok {
				out = append(out, strings.Join(parts, ""))
			}
		}
		return strings.Join(out, " ")
	}
	n := 0
	for _, s := range benchtext.RealTexts(t) {
		if got, want := hyphenJoins(s), plain(s); got != want {
			t.Errorf("hyphenJoins(%q) = %q, want %q", s, got, want)
		}
		if strings.Contains(s, "-") {
			n++
		}
	}
	if n < 100 {
		t.Errorf("only %d texts with a hyphen", n)
	}
}
