package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm"
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
}

func (o *dedupOutcome) warn(stage, code, msg string) {
	o.warnings = append(o.warnings, Warning{Stage: stage, Code: code, Message: msg})
}

// dedup decides store/update/merge/skip for each memory of a batch (which
// carry ids, content hashes and, when embedded, vectors). Everything is
// scoped by tenant/user/agent, never by session. With dedup disabled all
// are stored; without an LLM only the exact-text pre-check runs.
func (r *Runner) dedup(ctx context.Context, scope imprint.Scope, mems []imprint.Memory) dedupOutcome {
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
		if seen[h] {
			out.decisions[i].action = ActionSkip
			continue
		}
		seen[h] = true
		found, err := r.d.Store.FindMemoryByHash(ctx, scope, h)
		if err != nil {
			out.warn("dedup", imprint.ErrorCode(err), fmt.Sprintf("exact-text lookup: %v", err))
			continue
		}
		for _, f := range found {
			if f.SupersededBy == nil {
				out.decisions[i].action = ActionSkip
				break
			}
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
	r.judge(ctx, mems, judged, cands, &out)
	return out
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
			Scope: scope, Kind: imprint.KindMemory, Text: mems[i].Content, ExcludeIDs: batchIDs, Limit: ftsFetch,
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
func (r *Runner) judge(ctx context.Context, mems []imprint.Memory, judged []int, cands map[int][]string, out *dedupOutcome) {
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
	_, err = llm.CompleteJSON(ctx, r.d.LLM, imprint.LLMRequest{
		Op:        OpDedup,
		System:    dedupSystemPrompt,
		Messages:  []imprint.ChatMessage{{Role: "user", Content: string(body)}},
		MaxTokens: llmMaxTokens,
		Timeout:   r.cfg.LLMTimeout,
	}, func(b json.RawMessage) error {
		var err error
		raw, err = decodeDecisions(b)
		return err
	})
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
	d.mergedContent = cleanText(jsonString(rd.MergedContent))
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
