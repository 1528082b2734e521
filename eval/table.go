package eval

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report as a table for people: per method, recall@1,
// @5 and @10 per category and overall, the difference from the BM25
// baseline's overall recall at the same k, and the query latency; the
// recall block also gets a "block" row (evidence anywhere in it, set
// beside the baseline's @10). A legend of the methods and what was
// skipped follow.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	im := r.Imported
	p("LoCoMo retrieval: %s\n", r.File)
	p("conversations %d, turns %d; imported %d messages, %d episodes, %d traces, %d memories in %.2f s (extractor %s, embedder %s, %d import warnings)\n",
		r.Conversations, r.Turns, im.Messages, im.Episodes, im.Traces, im.Memories, im.Seconds, orNone(im.Extractor), orNone(im.Embedder), im.Warnings)
	p("questions of categories 1-4 evaluated: %d; search limit %d, recall budget %d tokens; all queries %.2f s\n",
		r.Evaluated, r.Limit, r.BudgetTokens, r.QuerySeconds)
	p("\n%-17s %-6s", "method", "")
	for _, c := range Categories {
		p(" %11s", c)
	}
	p(" %8s %8s %7s %7s\n", "overall", "vs bm25", "p50 ms", "p95 ms")
	if len(r.Methods) > 0 {
		p("%-17s %-6s", "", "")
		for _, c := range r.Methods[0].ByCategory {
			p(" %11s", fmt.Sprintf("n=%d", c.Questions))
		}
		p(" %8s\n", fmt.Sprintf("n=%d", r.Methods[0].Overall.Questions))
	}
	base := r.method(MethodBM25)
	for _, m := range r.Methods {
		rows := Ks
		if m.Name == MethodRecall {
			rows = append(rows[:len(rows):len(rows)], 0)
		}
		for i, k := range rows {
			name, label := "", "block"
			if i == 0 {
				name = m.Name
			}
			if k > 0 {
				label = fmt.Sprintf("@%d", k)
			}
			p("%-17s %-6s", name, label)
			for _, c := range m.ByCategory {
				p(" %11.3f", c.At(k))
			}
			p(" %8.3f", m.Overall.At(k))
			switch {
			case base == nil || m.Name == MethodBM25:
				p(" %8s", "")
			case k == 0:
				p(" %+8.3f", m.Overall.Any-base.Overall.At10)
			default:
				p(" %+8.3f", m.Overall.At(k)-base.Overall.At(k))
			}
			if i == 0 {
				p(" %7.2f %7.2f", m.P50MS, m.P95MS)
			}
			p("\n")
		}
	}
	p("\n")
	for _, m := range r.Methods {
		p("%-17s %s\n", m.Name, m.Doc)
	}
	s := r.Skipped
	p("\nnot evaluated: %d adversarial (category 5), %d without evidence, %d with no evidence id resolving to a stored turn, %d of another category, %d malformed\n",
		s.Adversarial, s.NoEvidence, s.Unresolved, s.OtherCategory, s.Malformed)
	p("evidence: %d entries naming several turns (split), %d ids resolving to no stored turn", r.SplitEvidence, len(r.UnresolvedIDs))
	if len(r.UnresolvedIDs) > 0 {
		p(": %s", strings.Join(r.UnresolvedIDs, ", "))
	}
	p("\n")
	// Rows without latency or baseline end in padding.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	if _, err := io.WriteString(w, strings.Join(lines, "\n")); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// method returns the named method's result, nil when the report has none.
func (r Report) method(name string) *MethodResult {
	for i := range r.Methods {
		if r.Methods[i].Name == name {
			return &r.Methods[i]
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
