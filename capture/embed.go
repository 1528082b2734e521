package capture

import (
	"context"
	"fmt"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// signatureInputChars caps a tool input inside an action text's signature.
const signatureInputChars = 300

// StateText is the text embedded as a step's summary vector: what the agent saw.
func StateText(st Step) string { return strings.TrimSpace(st.UserText) }

// ActionText is the text embedded as a step's action vector: the agent's
// text, then its tool calls as signatures name(input) joined by "; ".
func ActionText(st Step) string {
	parts := make([]string, 0, 2)
	if s := strings.TrimSpace(st.AgentText); s != "" {
		parts = append(parts, s)
	}
	if len(st.ToolCalls) > 0 {
		sigs := make([]string, len(st.ToolCalls))
		for i, tc := range st.ToolCalls {
			sigs[i] = tc.Name + "(" + clip(string(tc.Input), signatureInputChars) + ")"
		}
		parts = append(parts, strings.Join(sigs, "; "))
	}
	return strings.Join(parts, "\n")
}

// embedSteps makes the state and action vectors of steps in ONE Embed call
// whose texts are the pairs (state_i, action_i) in step order; an empty text
// is not sent and gets no vector. On failure every vector is nil and the
// error says why.
func embedSteps(ctx context.Context, e imprint.Embedder, steps []Step) (state, action [][]float32, err error) {
	state = make([][]float32, len(steps))
	action = make([][]float32, len(steps))
	type slot struct {
		step   int
		action bool
	}
	texts := make([]string, 0, 2*len(steps))
	slots := make([]slot, 0, 2*len(steps))
	for i, st := range steps {
		if s := StateText(st); s != "" {
			texts = append(texts, s)
			slots = append(slots, slot{i, false})
		}
		if s := ActionText(st); s != "" {
			texts = append(texts, s)
			slots = append(slots, slot{i, true})
		}
	}
	if len(texts) == 0 {
		return state, action, nil
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return make([][]float32, len(steps)), make([][]float32, len(steps)), fmt.Errorf("embed %d texts with %s: %w", len(texts), e.Name(), err)
	}
	if len(vecs) != len(texts) {
		return make([][]float32, len(steps)), make([][]float32, len(steps)), fmt.Errorf("embed %d texts with %s: got %d vectors", len(texts), e.Name(), len(vecs))
	}
	for k, s := range slots {
		if len(vecs[k]) == 0 {
			continue
		}
		if s.action {
			action[s.step] = vecs[k]
		} else {
			state[s.step] = vecs[k]
		}
	}
	return state, action, nil
}
