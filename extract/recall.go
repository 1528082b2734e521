package extract

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
)

// ftsFetch and ftsKeep are the keyword tier's recall sizes: fetch 10 hits
// per memory, keep the first 5 that are not in the batch.
const (
	ftsFetch = 10
	ftsKeep  = 5
)

// Recall tiers, as reported in logs.
const (
	tierNone   = "none"
	tierVector = "vector"
	tierFTS    = "fts"
)

// recall finds, for each memory index in rest, the ids of related live
// memories of the scope in the memory's workspace or in none: by vector
// when the embedder works and the scope has vectors, else by keywords.
func (r *Runner) recall(ctx context.Context, scope imprint.Scope, mems []imprint.Memory, rest []int, batchIDs []string, out *dedupOutcome) map[int][]string {
	inBatch := make(map[string]bool, len(batchIDs))
	for _, id := range batchIDs {
		inBatch[id] = true
	}
	topK := max(r.cfg.ConflictRecallTopK, 1)
	cands := map[int][]string{}

	if r.vectorTierAvailable(ctx, scope, mems, rest) {
		out.tier = tierVector
		ok := true
		for _, i := range rest {
			hits, err := r.d.Store.SearchVector(ctx, imprint.VectorQuery{
				Scope: scope, Kind: imprint.KindMemory, Vector: mems[i].Vec, Embedder: mems[i].Embedder,
				Workspace: mems[i].Workspace, IncludeGlobal: true,
				MinScore: r.cfg.RecallMinScore, ExcludeIDs: batchIDs, Limit: topK + len(mems),
			})
			if err != nil {
				out.warn("dedup", imprint.ErrorCode(err), fmt.Sprintf("vector recall failed, using keyword recall: %v", err))
				ok = false
				break
			}
			cands[i] = r.loadCandidates(ctx, scope, hits, inBatch, topK, out)
		}
		if ok {
			return cands
		}
		cands = map[int][]string{}
	}

	out.tier = tierFTS
	for _, i := range rest {
		hits, err := r.d.Store.SearchText(ctx, imprint.TextQuery{
			Scope: scope, Kind: imprint.KindMemory, Text: recallText(ctx, r.d.Store, scope, mems[i].Content),
			Workspace: mems[i].Workspace, IncludeGlobal: true, ExcludeIDs: batchIDs, Limit: ftsFetch,
		})
		if err != nil {
			out.warn("dedup", imprint.ErrorCode(err), fmt.Sprintf("keyword recall: %v", err))
			continue
		}
		cands[i] = r.loadCandidates(ctx, scope, hits, inBatch, ftsKeep, out)
	}
	return cands
}

// vectorTierAvailable reports whether every memory to recall for has a
// vector and the scope holds memory vectors of the same embedder.
func (r *Runner) vectorTierAvailable(ctx context.Context, scope imprint.Scope, mems []imprint.Memory, rest []int) bool {
	if r.d.Embedder == nil {
		return false
	}
	for _, i := range rest {
		if len(mems[i].Vec) == 0 {
			return false
		}
	}
	m := mems[rest[0]]
	probe, err := r.d.Store.SearchVector(ctx, imprint.VectorQuery{
		Scope: scope, Kind: imprint.KindMemory, Vector: m.Vec, Embedder: m.Embedder, MinScore: -1, Limit: 1,
	})
	return err == nil && len(probe) > 0
}

// loadCandidates turns hits into up to keep live candidate ids outside the
// batch, loading each candidate once.
func (r *Runner) loadCandidates(ctx context.Context, scope imprint.Scope, hits []imprint.Hit, inBatch map[string]bool, keep int, out *dedupOutcome) []string {
	var ids []string
	for _, h := range hits {
		if len(ids) == keep {
			break
		}
		if inBatch[h.ID] || (h.Kind != "" && h.Kind != imprint.KindMemory) {
			continue
		}
		m, ok := out.candidates[h.ID]
		if !ok {
			var err error
			m, err = r.d.Store.GetMemory(ctx, scope, h.ID)
			if err != nil {
				if !errors.Is(err, imprint.ErrNotFound) {
					out.warn("dedup", imprint.ErrorCode(err), fmt.Sprintf("load candidate %s: %v", h.ID, err))
				}
				continue
			}
			out.candidates[h.ID] = m
		}
		if m.SupersededBy != nil || contains(ids, h.ID) {
			continue
		}
		ids = append(ids, h.ID)
	}
	return ids
}

// recallTerms bounds the keyword tier's query: the memory's most
// distinctive terms only, so a query never ORs the posting lists of words
// that occur in nearly every memory. When the store can count matches
// (imprint.TermCounter), counts are capped at recallCommon and the kept terms'
// matches add up to at most recallBudget.
const (
	recallTerms  = 8
	recallCommon = 1000
	recallBudget = 2 * recallCommon
)

// recallText is the keyword-tier query for a memory's content: recallQuery
// with the store's term counts in the scope when it has them.
func recallText(ctx context.Context, store imprint.Store, scope imprint.Scope, content string) string {
	tc, ok := imprint.AsTermCounter(store)
	if !ok {
		return recallQuery(content, nil)
	}
	return recallQuery(content, func(terms []string) []int {
		n, err := tc.CountTermMatches(ctx, scope, imprint.KindMemory, terms, recallCommon)
		if err != nil || len(n) != len(terms) {
			return nil // fall back to word length
		}
		return n
	})
}

// recallQuery returns the keyword-tier query for a memory's content: its
// distinctive terms, space-separated, at most recallTerms of them. English
// stop words and words under three characters are dropped; CJK runs are
// split at common function characters and queried as character bigrams
// (which the store's word index holds). Without counts, longer words are
// kept first, as a stand-in for rarer ones (a CJK bigram counts as a
// five-letter word). With count (the stored matches of each term, capped
// at recallCommon), the 2×recallTerms longest are ranked rarest first and
// kept while their matches add up to at most recallBudget — always the
// rarest one, never a term matching nothing unless all match nothing. The
// kept terms stay in the content's order. When no
// term survives, the content is returned unchanged so a memory of only
// common words still recalls something.
func recallQuery(content string, count func(terms []string) []int) string {
	type term struct {
		text   string
		weight int
		pos    int
		n      int
	}
	var terms []term
	seen := map[string]bool{}
	add := func(t string, weight int) {
		if seen[t] {
			return
		}
		seen[t] = true
		terms = append(terms, term{text: t, weight: weight, pos: len(terms)})
	}
	for _, tok := range recallTokens(content) {
		if !tok.cjk {
			w := strings.ToLower(tok.text)
			n := utf8.RuneCountInString(w)
			if n < 3 || recallStopWords[w] {
				continue
			}
			add(w, n)
			continue
		}
		var seg []rune
		flush := func() {
			for i := 0; i+1 < len(seg); i++ {
				add(string(seg[i:i+2]), 5)
			}
			seg = seg[:0]
		}
		for _, r := range tok.text {
			if strings.ContainsRune(cjkFunctionChars, r) {
				flush()
				continue
			}
			seg = append(seg, r)
		}
		flush()
	}
	if len(terms) == 0 {
		return content
	}
	sort.SliceStable(terms, func(i, j int) bool { return terms[i].weight > terms[j].weight })
	if count != nil {
		terms = terms[:min(len(terms), 2*recallTerms)]
		texts := make([]string, len(terms))
		for i, t := range terms {
			texts[i] = t.text
		}
		if ns := count(texts); len(ns) == len(terms) {
			rank := func(n int) int { // zero matches last: such a term finds nothing
				if n == 0 {
					return recallCommon + 1
				}
				return n
			}
			for i := range terms {
				terms[i].n = ns[i]
			}
			sort.SliceStable(terms, func(i, j int) bool { return rank(terms[i].n) < rank(terms[j].n) })
			// Keep the rarest terms while their matches add up to at most
			// recallBudget (at least one term): the bm25 pass costs one
			// step per match.
			keep, sum := 0, 0
			for _, t := range terms {
				if t.n == 0 || keep > 0 && sum+t.n > recallBudget {
					break
				}
				keep++
				sum += t.n
			}
			if keep > 0 {
				terms = terms[:keep]
			}
		}
	}
	terms = terms[:min(len(terms), recallTerms)]
	sort.Slice(terms, func(i, j int) bool { return terms[i].pos < terms[j].pos })
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = t.text
	}
	return strings.Join(parts, " ")
}

// recallToken is a run of word characters or of CJK characters.
type recallToken struct {
	text string
	cjk  bool
}

// recallTokens splits s as the store's keyword index does: words (letters,
// digits, _ and combining marks) and CJK runs; anything else separates.
func recallTokens(s string) []recallToken {
	var out []recallToken
	start, cjk := -1, false
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, recallToken{text: s[start:end], cjk: cjk})
		}
		start = -1
	}
	for i, r := range s {
		c := unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 'ー'
		w := r != utf8.RuneError && (c || unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r))
		if !w {
			flush(i)
			continue
		}
		if start >= 0 && c != cjk {
			flush(i)
		}
		if start < 0 {
			start, cjk = i, c
		}
	}
	flush(len(s))
	return out
}

// cjkFunctionChars are common Chinese function characters (particles,
// pronouns, copulas, measure words) that split a CJK run for recall.
const cjkFunctionChars = "的了是在我你他她它们和与及或也就都很吗呢吧啊呀嘛着过把被给对从向这那个一有不没还又要会能可以为之而其所"

// recallStopWords are English words too common to tell memories apart.
var recallStopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are but not you your yours yourself all any can
		had has have having her hers herself him himself his how its itself our ours ourselves out own
		she they them their theirs themselves this that these those was were what when where which who
		whom why will with would could should shall may might must from into onto upon about above
		after again against before below between both down during each few further here more most
		off once only other over same some such than then there too under until very did does doing
		done just also been being because while through nor yes yeah okay really like likes liked
		get gets got getting make makes made thing things something anything everything nothing
		one ones lot lots much many well even still back way going gonna wanna want wants wanted
		know knows knew think thinks thought say says said tell told let lets see saw seen use used
		user assistant don didn doesn isn wasn aren weren won couldn wouldn shouldn haven hasn`) {
		m[w] = true
	}
	return m
}()
