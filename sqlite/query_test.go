package sqlite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want ftsQuery
	}{
		{"", ftsQuery{}},
		{"a I", ftsQuery{}},
		{"coffee", ftsQuery{trigram: `"coffee"`}},
		{"Coffee coffee COFFEE", ftsQuery{trigram: `"coffee"`}},
		{"black coffee", ftsQuery{trigram: `"black" OR "coffee"`}},
		{`coffee OR tea`, ftsQuery{trigram: `"coffee" OR "tea"`, bigram: `"or"`}},
		{`NEAR(coffee tea, 2)`, ftsQuery{trigram: `"near" OR "coffee" OR "tea"`}},
		{`"quoted" -neg col:val *star`, ftsQuery{trigram: `"quoted" OR "neg" OR "col" OR "val" OR "star"`}},
		{"AI ok", ftsQuery{bigram: `"ai" OR "ok"`}},
		{"北京", ftsQuery{bigram: `"北京"`}},
		{"向量数据库", ftsQuery{trigram: `"向量数据库"`}},
		{"去北京 出差", ftsQuery{trigram: `"去北京"`, bigram: `"出差"`}},
		{"Go语言tutorial", ftsQuery{trigram: `"tutorial"`, bigram: `"go" OR "语言"`}},
		{"update_reservation_baggages", ftsQuery{trigram: `"update_reservation_baggages"`}},
		{"coffee\x00tea", ftsQuery{trigram: `"coffee" OR "tea"`}},
		{"café naïve", ftsQuery{trigram: `"café" OR "naïve"`}},
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
	if n := len(splitOr(q.trigram)) + len(splitOr(q.bigram)); n != maxQueryTerms {
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

func TestBigramText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"hello world", ""},
		{"北京", "北京"},
		{"我在北京", "我在 在北 北京"},
		{"AI 在 北京 ok", "ai 北京 ok"},
		{"東京タワー", "東京 京タ タワ ワー"},
		{"서울 여행", "서울 여행"},
	} {
		if got := bigramText(tc.in); got != tc.want {
			t.Errorf("bigramText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
