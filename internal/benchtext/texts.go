// Package benchtext makes the corpora and queries of the stores' benchmarks
// from the real texts of the shared test data, so SQLite's and
// PostgreSQL's benchmarks read the same rows.
package benchtext

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/keyword"
)

// RealTexts returns the message texts of the τ-bench trajectories and the
// LoCoMo dialogs in the shared test data.
func RealTexts(tb testing.TB) []string {
	tb.Helper()
	root := testfiles.Dir()
	var out []string
	var tau []struct {
		Traj []struct {
			Content *string `json:"content"`
		} `json:"traj"`
	}
	readJSON(tb, filepath.Join(root, "tau-bench", "airline-40.json"), &tau)
	for _, tr := range tau {
		for _, m := range tr.Traj {
			if m.Content != nil && strings.TrimSpace(*m.Content) != "" {
				out = append(out, clampRunes(*m.Content, 1200))
			}
		}
	}
	var locomo []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	readJSON(tb, filepath.Join(root, "locomo", "locomo-2conv.json"), &locomo)
	for _, c := range locomo {
		keys := make([]string, 0, len(c.Conversation))
		for k := range c.Conversation {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			var turns []struct {
				Text string `json:"text"`
			}
			if json.Unmarshal(c.Conversation[k], &turns) != nil {
				continue // speaker names and dates
			}
			for _, t := range turns {
				if strings.TrimSpace(t.Text) != "" {
					out = append(out, t.Text)
				}
			}
		}
	}
	if len(out) < 1000 {
		tb.Fatalf("only %d texts in the shared test data", len(out))
	}
	return out
}

// readJSON reads the JSON file at path into v.
func readJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("shared test data: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}

// clampRunes is s cut to n runes.
func clampRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// Row returns row i of a corpus of any size made of texts: the real texts in order, then
// each text joined with another one, so rows vary but stay real language.
func Row(texts []string, i int) string {
	n := len(texts)
	if i < n {
		return texts[i]
	}
	round := i / n
	return texts[i%n] + " " + texts[(i*7+round*131)%n]
}

// QueryWords picks, from the distinct lowercase words of the real texts
// (5+ letters), those in the fewest texts (uncommon) or the most (common),
// deterministically.
func QueryWords(texts []string, common bool, count int) []string {
	df := map[string]int{}
	for _, t := range texts {
		seen := map[string]bool{}
		for _, tok := range keyword.Tokenize(strings.ToLower(t)) {
			w := tok.Text
			if tok.CJK || len(w) < 5 || seen[w] || strings.ContainsAny(w, "0123456789_") {
				continue
			}
			seen[w] = true
			df[w]++
		}
	}
	words := make([]string, 0, len(df))
	for w, n := range df {
		if common || n == 2 {
			words = append(words, w)
		}
	}
	sort.Slice(words, func(i, j int) bool {
		if df[words[i]] != df[words[j]] {
			return df[words[i]] > df[words[j]]
		}
		return words[i] < words[j]
	})
	if !common {
		r := rand.New(rand.NewPCG(3, 3))
		r.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	}
	return words[:min(count, len(words))]
}

// TextQueries makes 2- and 3-term queries from words.
func TextQueries(words []string, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		k := 2 + i%2
		var terms []string
		for j := range k {
			terms = append(terms, words[(i*3+j)%len(words)])
		}
		out = append(out, strings.Join(terms, " "))
	}
	return out
}
