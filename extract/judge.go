package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llmjson"
)

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
