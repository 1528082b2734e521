package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llmjson"
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

// decision is what happens to one new memory.
type decision struct {
	action string
	// targets are the candidate ids an update or merge replaces.
	targets        []string
	mergedContent  string
	mergedType     imprint.MemoryType
	mergedPriority *int
}

// dedupOutcome is the dedup stage's verdict on a batch.
type dedupOutcome struct {
	// decisions is parallel to the batch.
	decisions []decision
	// candidates are the stored memories recalled, by id.
	candidates  map[string]imprint.Memory
	tier        string
	judgeCalled bool
	warnings    []Warning
	// refused is the judge call's error when an LLM budget refused it.
	refused error
}

func (o *dedupOutcome) warn(stage, code, msg string) {
	o.warnings = append(o.warnings, Warning{Stage: stage, Code: code, Message: msg})
}

// dedup decides store/update/merge/skip for each memory of a batch (which
// carry ids, content hashes and, when embedded, vectors). Everything is
// scoped by tenant/user/agent, never by session. With dedup disabled all
// are stored; without an LLM only the exact-text pre-check runs.
func (r *Runner) dedup(ctx context.Context, scope imprint.Scope, mems []imprint.Memory) dedupOutcome {
	return r.dedupOver(ctx, scope, mems, nil)
}

// dedupOver is dedup for a window planned after others whose memories are
// not in the store yet: planned holds the content hashes those windows
// store, which the pre-check counts as stored live.
func (r *Runner) dedupOver(ctx context.Context, scope imprint.Scope, mems []imprint.Memory, planned map[string]bool) dedupOutcome {
	out := dedupOutcome{decisions: make([]decision, len(mems)), candidates: map[string]imprint.Memory{}, tier: tierNone}
	for i := range out.decisions {
		out.decisions[i].action = ActionStore
	}
	if !r.cfg.EnableDedup || len(mems) == 0 {
		return out
	}

	// Deterministic pre-check: the same normalized text is already stored
	// live in the scope, or earlier in this batch.
	seen := map[string]bool{}
	for i, m := range mems {
		h := m.ContentHash
		if seen[h] || planned[h] {
			out.decisions[i].action = ActionSkip
			continue
		}
		seen[h] = true
		live, err := r.hasLiveHash(ctx, scope, h)
		if err != nil {
			out.warn("dedup", imprint.ErrorCode(err), fmt.Sprintf("exact-text lookup: %v", err))
			continue
		}
		if live {
			out.decisions[i].action = ActionSkip
		}
	}
	if r.d.LLM == nil {
		return out
	}

	var rest []int
	batchIDs := make([]string, len(mems))
	for i, m := range mems {
		batchIDs[i] = m.ID
		if out.decisions[i].action != ActionSkip {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return out
	}
	cands := r.recall(ctx, scope, mems, rest, batchIDs, &out)
	var judged []int
	for _, i := range rest {
		if len(cands[i]) > 0 {
			judged = append(judged, i)
		}
	}
	if len(judged) == 0 {
		return out // nothing related is stored: no judge call
	}
	r.judge(ctx, scope, mems, judged, cands, &out)
	return out
}

// hasLiveHash reports whether a live memory of the scope has the hash.
func (r *Runner) hasLiveHash(ctx context.Context, scope imprint.Scope, h string) (bool, error) {
	return r.d.Store.HasLiveMemoryHash(ctx, scope, h)
}

// recall finds, for each memory index in rest, the ids of related live
// memories of the scope: by vector when the embedder works and the scope
// has vectors, else by keywords.
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
			Scope: scope, Kind: imprint.KindMemory, Text: recallText(ctx, r.d.Store, scope, mems[i].Content), ExcludeIDs: batchIDs, Limit: ftsFetch,
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

// judgeDoc is the user message of OpDedup.
type judgeDoc struct {
	Candidates  []judgeCandidate `json:"candidates"`
	NewMemories []judgeNew       `json:"new_memories"`
}

type judgeCandidate struct {
	ID         string             `json:"id"`
	Content    string             `json:"content"`
	Type       imprint.MemoryType `json:"type"`
	Priority   int                `json:"priority"`
	SceneName  string             `json:"scene_name"`
	Timestamps []imprint.Time     `json:"timestamps"`
}

type judgeNew struct {
	ID           string             `json:"id"`
	Content      string             `json:"content"`
	Type         imprint.MemoryType `json:"type"`
	Priority     int                `json:"priority"`
	SceneName    string             `json:"scene_name"`
	CandidateIDs []string           `json:"candidate_ids"`
}

// judge makes the one OpDedup call for the memories in judged and turns its
// reply into decisions. A failed call leaves them all stored, with a warning.
func (r *Runner) judge(ctx context.Context, scope imprint.Scope, mems []imprint.Memory, judged []int, cands map[int][]string, out *dedupOutcome) {
	doc := judgeDoc{Candidates: []judgeCandidate{}, NewMemories: make([]judgeNew, 0, len(judged))}
	pooled := map[string]bool{}
	for _, i := range judged {
		m := mems[i]
		doc.NewMemories = append(doc.NewMemories, judgeNew{ID: m.ID, Content: m.Content, Type: m.Type,
			Priority: m.Priority, SceneName: m.SceneName, CandidateIDs: cands[i]})
		for _, id := range cands[i] {
			if pooled[id] {
				continue
			}
			pooled[id] = true
			c := out.candidates[id]
			ts := c.Timestamps
			if ts == nil {
				ts = []imprint.Time{}
			}
			doc.Candidates = append(doc.Candidates, judgeCandidate{ID: c.ID, Content: c.Content, Type: c.Type,
				Priority: c.Priority, SceneName: c.SceneName, Timestamps: ts})
		}
	}
	body, err := json.Marshal(doc)
	if err != nil {
		out.warn("dedup", "internal", fmt.Sprintf("encode judge request: %v", err))
		return
	}
	var raw []rawDecision
	out.judgeCalled = true
	// The judge finishes a window whose extraction call was made: a limit
	// on calls (--max-llm-calls) lets it through rather than redo both.
	_, err = llmjson.CompleteJSON(imprint.Continuing(ctx), r.d.LLM, imprint.LLMRequest{
		Op:        OpDedup,
		Scope:     scope,
		System:    dedupSystemPrompt,
		Messages:  []imprint.ChatMessage{{Role: "user", Content: string(body)}},
		MaxTokens: llmMaxTokens,
		Timeout:   r.cfg.LLMTimeout,
	}, func(b json.RawMessage) error {
		var err error
		raw, err = decodeDecisions(b)
		return err
	})
	if errors.Is(err, imprint.ErrLLMBudget) {
		out.refused = err
		return
	}
	if err != nil {
		out.warn("dedup", imprint.ErrorCode(err), fmt.Sprintf("conflict judge failed, storing all memories: %v", err))
		return
	}

	byID := map[string]int{}
	for _, i := range judged {
		byID[mems[i].ID] = i
	}
	for _, rd := range raw {
		id := strings.TrimSpace(jsonString(rd.RecordID))
		i, ok := byID[id]
		if !ok {
			r.log().Debug("dedup judge named an unknown memory", "record_id", id)
			continue
		}
		out.decisions[i] = r.toDecision(rd, cands[i])
	}
}

// toDecision validates one judge decision against the memory's candidates.
func (r *Runner) toDecision(rd rawDecision, cands []string) decision {
	d := decision{action: strings.ToLower(strings.TrimSpace(jsonString(rd.Action)))}
	switch d.action {
	case ActionStore, ActionSkip, ActionUpdate, ActionMerge:
	default:
		r.log().Warn("dedup judge gave an unknown action; storing", "action", d.action)
		d.action = ActionStore
	}
	var ignored []string
	for _, t := range jsonStrings(rd.TargetIDs) {
		if !contains(cands, t) {
			ignored = append(ignored, t)
			continue
		}
		if !contains(d.targets, t) {
			d.targets = append(d.targets, t)
		}
	}
	if len(ignored) > 0 {
		r.log().Warn("dedup judge targets that are not candidates of the memory ignored",
			"count", len(ignored), "target_ids", ignored[:min(len(ignored), 10)])
	}
	d.mergedContent = imprint.CleanText(jsonString(rd.MergedContent))
	if t := imprint.MemoryType(strings.ToLower(strings.TrimSpace(jsonString(rd.MergedType)))); t.Valid() {
		d.mergedType = t
	}
	if p, ok := jsonInt(rd.MergedPriority); ok {
		d.mergedPriority = &p
	}
	return d
}

type rawDecision struct {
	RecordID       json.RawMessage `json:"record_id"`
	Action         json.RawMessage `json:"action"`
	TargetIDs      json.RawMessage `json:"target_ids"`
	MergedContent  json.RawMessage `json:"merged_content"`
	MergedType     json.RawMessage `json:"merged_type"`
	MergedPriority json.RawMessage `json:"merged_priority"`
}

// decodeDecisions reads an OpDedup reply: {"decisions": [...]} or a bare
// array of decisions.
func decodeDecisions(raw json.RawMessage) ([]rawDecision, error) {
	raw = bytes.TrimSpace(raw)
	var items json.RawMessage = raw
	if len(raw) > 0 && raw[0] == '{' {
		var obj struct {
			Decisions json.RawMessage `json:"decisions"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("reply: %w", err)
		}
		if obj.Decisions == nil {
			return nil, fmt.Errorf(`reply has no "decisions" array`)
		}
		items = obj.Decisions
	}
	var out []rawDecision
	if err := json.Unmarshal(items, &out); err != nil {
		return nil, fmt.Errorf("decisions must be an array of objects: %w", err)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
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
