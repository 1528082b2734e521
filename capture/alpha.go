package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llmjson"
)

// NeutralAlpha is the α of a reflection that was not graded (scoring off,
// no LLM, or the grading call failed).
const NeutralAlpha = 0.5

const alphaMaxTokens = 300

// alphaScore is a graded reflection.
type alphaScore struct {
	Alpha  float64
	Usable bool
	Reason string
}

// scoreAlpha asks m to grade the reflection of steps[i] (op capture.alpha.v1)
// and returns α clamped to [0, 1], 0 when the reflection is not usable.
// Errors are the LLM's, or of kind ErrLLMOutputMalformed.
func scoreAlpha(ctx context.Context, m imprint.LLM, steps []Step, i int, task, downstream, reflection string) (alphaScore, error) {
	v := viewOf(steps, i, task)
	v.Downstream = downstream
	v.Reflection = quoted(reflection)
	user, err := render("alpha.user.tmpl", v)
	if err != nil {
		return alphaScore{}, err
	}
	var sc alphaScore
	_, err = llmjson.CompleteJSON(ctx, m, imprint.LLMRequest{
		Op:        OpAlpha,
		System:    alphaSystem,
		Messages:  []imprint.ChatMessage{{Role: "user", Content: user}},
		MaxTokens: alphaMaxTokens,
	}, func(raw json.RawMessage) error {
		s, err := decodeAlpha(raw)
		sc = s
		return err
	})
	if err != nil {
		return alphaScore{}, fmt.Errorf("score reflection of step %s: %w", steps[i].Key, err)
	}
	return sc, nil
}

// decodeAlpha validates {"alpha": number, "usable": bool, "reason": string}.
func decodeAlpha(raw json.RawMessage) (alphaScore, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return alphaScore{}, errors.New(`the reply must be a JSON object {"alpha", "usable", "reason"}`)
	}
	a, err := jsonNumber(obj["alpha"])
	if err != nil {
		return alphaScore{}, fmt.Errorf("alpha %w", err)
	}
	u, err := jsonBool(obj["usable"])
	if err != nil {
		return alphaScore{}, fmt.Errorf("usable %w", err)
	}
	var reason string
	_ = json.Unmarshal(obj["reason"], &reason) // optional; a non-string is ignored
	return alphaScore{Alpha: finalAlpha(a, u), Usable: u, Reason: reason}, nil
}

// finalAlpha clamps a to [0, 1] (NaN is 0) and zeroes it when not usable.
func finalAlpha(a float64, usable bool) float64 {
	if !usable || math.IsNaN(a) {
		return 0
	}
	return min(max(a, 0), 1)
}

func jsonNumber(raw json.RawMessage) (float64, error) {
	var f float64
	if len(raw) == 0 || raw[0] == '"' || string(raw) == "null" || json.Unmarshal(raw, &f) != nil {
		return 0, errors.New("must be a number")
	}
	return f, nil
}

func jsonBool(raw json.RawMessage) (bool, error) {
	var b bool
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &b) != nil {
		return false, errors.New("must be true or false")
	}
	return b, nil
}
