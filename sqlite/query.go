package sqlite

import (
	"strings"

	"github.com/imprint-dev/imprint/keyword"
)

// maxQueryTerms bounds how many terms of a query reach FTS.
const maxQueryTerms = keyword.MaxQueryTerms

// ftsQuery is a keyword query split across the two indexes of a kind:
// words holds Latin (non-CJK) words and 2-character CJK terms for the word
// index; trigram holds CJK runs of three or more characters for the trigram
// index. Either may be empty; both empty means no term survived (the search
// returns nothing).
type ftsQuery struct {
	words   string
	trigram string
}

func (q ftsQuery) empty() bool { return q.trigram == "" && q.words == "" }

// quote makes one FTS5 string literal: the term between double quotes with
// any double quote doubled, so it is matched as a phrase and never parsed
// as query syntax.
func quote(term string) string {
	return `"` + strings.ReplaceAll(term, `"`, `""`) + `"`
}

// buildQuery turns user text into FTS5 MATCH expressions: the terms of
// keyword.Query, each quoted, OR-ed.
func buildQuery(text string) ftsQuery {
	t := keyword.Query(text)
	join := func(terms []string) string {
		q := make([]string, len(terms))
		for i, term := range terms {
			q[i] = quote(term)
		}
		return strings.Join(q, " OR ")
	}
	return ftsQuery{words: join(t.Words), trigram: join(t.Trigram)}
}

// indexTexts is keyword.IndexTexts.
func indexTexts(s string) (words, cjk string) { return keyword.IndexTexts(s) }
