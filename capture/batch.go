package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llmjson"
)

const (
	batchBaseTokens    = 512
	batchTokensPerStep = 256
	batchMaxTokens     = 8192
)

// batchRequest is the user message of capture.batch.v1.
type batchRequest struct {
	TaskContext *string     `json:"task_context"`
	Steps       []batchStep `json:"steps"`
}

type batchStep struct {
	Idx          int         `json:"idx"`
	State        string      `json:"state"`
	Action       string      `json:"action"`
	ToolCalls    []batchTool `json:"tool_calls"`
	Outcome      string      `json:"outcome"`
	Reflection   string      `json:"reflection"`
	SynthAllowed bool        `json:"synth_allowed"`
}

type batchTool struct {
	Name   string `json:"name"`
	Input  string `json:"input"`
	Output string `json:"output"`
	Error  string `json:"error"`
}

// batchEntry is one validated score of a batched reply.
type batchEntry struct {
	Idx            int
	ReflectionText string
	Alpha          float64
	Usable         bool
	Reason         string
}

// batchScore sends the steps idx (positions in steps) in one
// capture.batch.v1 call and returns the validated entries by position. Every
// step is sent with its existing reflection (existing[i]) and whether the
// model may write one. Errors are the LLM's, or of kind
// ErrLLMOutputMalformed when the reply stays invalid after a repair retry.
func batchScore(ctx context.Context, m imprint.LLM, steps []Step, idx []int, existing []string, task string, synth bool) (map[int]batchEntry, error) {
	req := newBatchRequest(steps, idx, existing, task, synth)
	want := make(map[int]bool, len(idx))
	for _, i := range idx {
		want[i] = true
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode batch request: %w", err)
	}
	var got map[int]batchEntry
	_, err = llmjson.CompleteJSON(ctx, m, imprint.LLMRequest{
		Op:        OpBatch,
		System:    batchSystem,
		Messages:  []imprint.ChatMessage{{Role: "user", Content: string(body)}},
		MaxTokens: min(batchMaxTokens, batchBaseTokens+batchTokensPerStep*len(idx)),
	}, func(raw json.RawMessage) error {
		g, err := decodeBatch(raw, want)
		got = g
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("batch scoring of %d steps: %w", len(idx), err)
	}
	return got, nil
}

// newBatchRequest is the capture.batch.v1 request body for the steps idx
// (positions in steps).
func newBatchRequest(steps []Step, idx []int, existing []string, task string, synth bool) batchRequest {
	req := batchRequest{Steps: make([]batchStep, len(idx))}
	if task != "" {
		req.TaskContext = &task
	}
	for k, i := range idx {
		st := steps[i]
		bs := batchStep{
			Idx:          i,
			State:        clip(st.UserText, promptStateChars),
			Action:       clip(st.AgentText, promptActionChars),
			ToolCalls:    make([]batchTool, len(st.ToolCalls)),
			Outcome:      outcome(steps, i),
			Reflection:   existing[i],
			SynthAllowed: synth && existing[i] == "",
		}
		for j, tc := range st.ToolCalls {
			bs.ToolCalls[j] = batchTool{
				Name:   tc.Name,
				Input:  clip(string(tc.Input), promptToolInputChars),
				Output: clip(tc.Output, promptToolOutputChars),
				Error:  clip(tc.Error, promptToolOutputChars),
			}
		}
		req.Steps[k] = bs
	}
	return req
}

// decodeBatch validates a batched reply ({"scores": [...]} or a bare array):
// exactly one entry per step sent, matched by idx (not by position), each
// with a numeric alpha, a boolean usable and a string or null
// reflection_text.
func decodeBatch(raw json.RawMessage, want map[int]bool) (map[int]batchEntry, error) {
	raw = bytes.TrimSpace(raw)
	var entries []json.RawMessage
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &entries); err != nil {
			return nil, errors.New(`"scores" must be an array of objects`)
		}
	} else {
		var obj struct {
			Scores *[]json.RawMessage `json:"scores"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil || obj.Scores == nil {
			return nil, errors.New(`the reply must be a JSON object with a "scores" array`)
		}
		entries = *obj.Scores
	}
	if len(entries) != len(want) {
		return nil, fmt.Errorf("length mismatch: %d scores for %d steps; return exactly one entry per step", len(entries), len(want))
	}
	out := make(map[int]batchEntry, len(entries))
	for k, e := range entries {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(e, &obj); err != nil || obj == nil {
			return nil, fmt.Errorf("scores[%d] must be an object", k)
		}
		f, err := jsonNumber(obj["idx"])
		if err != nil || f != math.Trunc(f) {
			return nil, fmt.Errorf("scores[%d].idx must be an integer", k)
		}
		i := int(f)
		if !want[i] {
			return nil, fmt.Errorf("scores[%d].idx %d is not the idx of a step sent", k, i)
		}
		if _, dup := out[i]; dup {
			return nil, fmt.Errorf("scores[%d].idx %d appears twice", k, i)
		}
		a, err := jsonNumber(obj["alpha"])
		if err != nil {
			return nil, fmt.Errorf("scores[%d].alpha %w", k, err)
		}
		u, err := jsonBool(obj["usable"])
		if err != nil {
			return nil, fmt.Errorf("scores[%d].usable %w", k, err)
		}
		var text string
		if rt, ok := obj["reflection_text"]; ok && string(rt) != "null" {
			if err := json.Unmarshal(rt, &text); err != nil {
				return nil, fmt.Errorf("scores[%d].reflection_text must be a string or null", k)
			}
		}
		var reason string
		_ = json.Unmarshal(obj["reason"], &reason)
		out[i] = batchEntry{Idx: i, ReflectionText: strings.TrimSpace(text), Alpha: a, Usable: u, Reason: reason}
	}
	return out, nil
}

// chunks splits positions 0..n-1 into runs of at most size.
func chunks(n, size int) [][]int {
	var out [][]int
	for start := 0; start < n; start += size {
		end := min(start+size, n)
		c := make([]int, 0, end-start)
		for i := start; i < end; i++ {
			c = append(c, i)
		}
		out = append(out, c)
	}
	return out
}
