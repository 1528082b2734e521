package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/imprint-dev/imprint"
)

// sessionStartOutput is the JSON a SessionStart command hook prints on
// stdout: Claude Code adds additionalContext to the session's context.
type sessionStartOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// sessionStart recalls the standing instructions and the user's persona
// (no query) and returns them as SessionStart's output, once per session:
// a session that already had them (a resume) gets "", unless Claude Code
// compacted the conversation, which may have summarized them away. A
// payload without session_id is injected every time (nothing to remember
// it by).
func (h *ClaudeCodeHook) sessionStart(ctx context.Context, p hookPayload) (string, error) {
	var statePath string
	st := hookState{}
	if p.SessionID != "" {
		statePath = h.statePath(p.SessionID)
		st = loadHookState(statePath)
		if st.Started && p.Source != sessionStartCompact {
			return "", nil
		}
	}
	text, err := h.API.Recall(ctx, imprint.RecallQuery{Scope: h.Scope, SessionID: p.SessionID,
		Workspace: h.workspace(p, st), BudgetTokens: h.RecallBudget, Persona: true})
	if err != nil {
		return "", fmt.Errorf("recall standing context: %w", err)
	}
	if statePath != "" {
		st.Started = true
		if err := saveHookState(statePath, st); err != nil {
			return "", err
		}
	}
	if strings.TrimSpace(text) == "" {
		return "", nil
	}
	var out sessionStartOutput
	out.HookSpecificOutput.HookEventName = "SessionStart"
	out.HookSpecificOutput.AdditionalContext = text
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the block's <imprint-recall> tags stay readable
	if err := enc.Encode(out); err != nil {
		return "", fmt.Errorf("session start output: %w", err)
	}
	return b.String(), nil
}
