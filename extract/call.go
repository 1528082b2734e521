package extract

import (
	"context"
	"encoding/json"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llmjson"
)

// llmMaxTokens bounds the replies of both extraction ops.
const llmMaxTokens = 4096

// callExtract makes the extraction call for a window of a session in
// state st (OpExtractPeople for a conversation between people, else
// OpExtract) and reads its scenes. Between people an instruction the
// model gives anyway is dropped, with a warning.
func (r *Runner) callExtract(ctx context.Context, scope imprint.Scope, st sessionState, w Window) ([]imprint.Candidate, []string, string, []Warning, error) {
	prevScene := st.scene
	op, system, user := OpExtract, extractSystemPrompt, ExtractionUserMessage(prevScene, w.Background, w.New)
	if st.people {
		op, system, user = OpExtractPeople, extractPeopleSystemPrompt, ExtractionPeopleUserMessage(prevScene, w.Background, w.New)
	}
	var scenes []rawScene
	_, err := llmjson.CompleteJSON(ctx, r.d.LLM, imprint.LLMRequest{
		Op:        op,
		System:    system,
		Scope:     scope,
		Messages:  []imprint.ChatMessage{{Role: "user", Content: user}},
		MaxTokens: llmMaxTokens,
		Timeout:   r.cfg.LLMTimeout,
	}, func(raw json.RawMessage) error {
		var err error
		scenes, err = decodeScenes(raw)
		return err
	})
	if err != nil {
		return nil, nil, "", nil, err
	}
	cands, names, last, warns := scenesToCandidates(scenes, prevScene)
	if st.people {
		kept := cands[:0]
		for _, c := range cands {
			if c.Type == imprint.MemoryInstruction {
				warns = append(warns, Warning{Stage: "parse", Code: "instruction_between_people",
					Message: fmt.Sprintf("instruction in a conversation between people skipped: %s", clampRunes(c.Content, 200))})
				continue
			}
			kept = append(kept, c)
		}
		cands = kept
	}
	return cands, names, last, warns, nil
}
