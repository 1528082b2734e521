package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
)

// Claude Code hook events imprint handles (the hook_event_name values, as
// `imprint hook claude-code <event>` accepts them in any case).
const (
	hookStop             = "stop"
	hookSubagentStop     = "subagentstop"
	hookSessionEnd       = "sessionend"
	hookUserPromptSubmit = "userpromptsubmit"
	hookSessionStart     = "sessionstart"
)

// sessionStartCompact is the SessionStart source after Claude Code
// compacted the conversation: what was injected may be summarized away,
// so the standing context is injected again.
const sessionStartCompact = "compact"

// hookPayload is the JSON object Claude Code writes to a command hook's
// stdin. Fields a hook does not use are ignored.
type hookPayload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	StopHookActive bool   `json:"stop_hook_active"`
	Prompt         string `json:"prompt"`
	Reason         string `json:"reason"`
	// Source is why a session started: startup, resume, clear or compact.
	Source string `json:"source"`
}

// HookAPI is what the Claude Code hook needs from a running imprint serve.
type HookAPI interface {
	RecordMessages(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) error
	SubmitEpisode(ctx context.Context, ep imprint.Episode) error
	EndSession(ctx context.Context, scope imprint.Scope, sessionID string) error
	// Recall returns the context block for q ("" when there is nothing
	// to recall).
	Recall(ctx context.Context, q imprint.RecallQuery) (string, error)
}

// ClaudeCodeHook feeds a running imprint serve from Claude Code's hooks:
// on Stop and SubagentStop it posts the transcript's messages and finished
// episodes not posted yet, on SessionEnd the same and then ends the
// session, on UserPromptSubmit it recalls context for the prompt, on
// SessionStart it injects the standing instructions and the user's
// persona, once per session (again after a compaction). What was
// posted is tracked per session in a state file under DataDir; the service
// skips message ids it has, so a hook run twice records nothing twice.
type ClaudeCodeHook struct {
	API     HookAPI
	Scope   imprint.Scope
	DataDir string
	// RecallBudget is the token budget of the recalled context.
	RecallBudget int
}

// Run handles one Claude Code hook event (event as given on the command
// line; "" or "auto" takes the payload's hook_event_name) with the payload
// Claude Code wrote to the hook's stdin. For UserPromptSubmit it returns
// the recalled context to print, for SessionStart the JSON object
// Claude Code reads the session's additional context from. Bad input is
// ErrInvalid.
func (h *ClaudeCodeHook) Run(ctx context.Context, event string, payload io.Reader) (string, error) {
	raw, err := io.ReadAll(io.LimitReader(payload, 1<<20))
	if err != nil {
		return "", fmt.Errorf("read hook payload: %w", err)
	}
	var p hookPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", imprint.Invalidf("hook payload on stdin is not a JSON object: %v", err)
	}
	ev := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(event))
	if ev == "" || ev == "auto" {
		ev = strings.ToLower(p.HookEventName)
	}
	switch ev {
	case hookUserPromptSubmit:
		if strings.TrimSpace(p.Prompt) == "" {
			return "", nil
		}
		text, err := h.API.Recall(ctx, imprint.RecallQuery{Scope: h.Scope, Text: p.Prompt, SessionID: p.SessionID,
			Workspace: h.workspace(p, hookState{}), BudgetTokens: h.RecallBudget})
		if err != nil {
			return "", fmt.Errorf("recall: %w", err)
		}
		return text, nil
	case hookSessionStart:
		return h.sessionStart(ctx, p)
	case hookStop, hookSubagentStop:
		_, err := h.sync(ctx, p, false)
		return "", err
	case hookSessionEnd:
		sid, err := h.sync(ctx, p, true)
		if err != nil {
			return "", err
		}
		if sid == "" {
			return "", imprint.Invalidf("hook payload has no session_id")
		}
		if err := h.API.EndSession(ctx, h.Scope, sid); err != nil {
			return "", fmt.Errorf("end session %s: %w", sid, err)
		}
		return "", nil
	}
	return "", imprint.Invalidf("unknown Claude Code hook event %q: want SessionStart, UserPromptSubmit, Stop, SubagentStop or SessionEnd", event)
}

// hookState is what a session's hooks have posted so far.
type hookState struct {
	Messages map[string]bool `json:"messages"`
	// Episodes maps an episode id to the number of turns posted.
	Episodes map[string]int `json:"episodes"`
	// Started is set once SessionStart injected the standing context.
	Started bool `json:"started,omitempty"`
	// Workspace is the one the session's records were posted with, which
	// its recalls use (the payload's cwd may be a subfolder by then).
	Workspace string `json:"workspace,omitempty"`
}

// sync posts the transcript's messages and episodes that were not
// posted yet (an episode again when it grew) and returns the session id.
// With final, an episode without an assistant turn is posted as abandoned;
// otherwise it is left for a later hook.
func (h *ClaudeCodeHook) sync(ctx context.Context, p hookPayload, final bool) (string, error) {
	if p.TranscriptPath == "" {
		return p.SessionID, nil
	}
	f, err := os.Open(p.TranscriptPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && final {
			return p.SessionID, nil
		}
		return p.SessionID, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	tr, err := importer.ReadClaudeCode(f, p.TranscriptPath)
	if err != nil {
		return p.SessionID, fmt.Errorf("read transcript: %w", err)
	}
	sid := tr.SessionID
	if sid == "" {
		sid = p.SessionID
	}
	// The project: the transcript's cwd, as an import of it reads it, else
	// the payload's, else the project folder.
	ws := tr.Workspace
	if ws == "" {
		ws = strings.TrimSpace(p.Cwd)
	}
	if ws == "" {
		ws = claudeCodeProject(p.TranscriptPath)
	}
	tr.SetWorkspace(ws)
	statePath := h.statePath(sid)
	st := loadHookState(statePath)
	if st.Workspace != ws {
		st.Workspace = ws
		if err := saveHookState(statePath, st); err != nil {
			return sid, err
		}
	}

	var msgs []imprint.Message
	for _, m := range tr.Messages {
		if !st.Messages[m.ID] {
			m.Scope = imprint.Scope{}
			msgs = append(msgs, m)
		}
	}
	if len(msgs) > 0 {
		if err := h.API.RecordMessages(ctx, h.Scope, sid, msgs); err != nil {
			return sid, fmt.Errorf("post messages: %w", err)
		}
		for _, m := range msgs {
			st.Messages[m.ID] = true
		}
		if err := saveHookState(statePath, st); err != nil {
			return sid, err
		}
	}
	for _, ep := range tr.Episodes {
		if st.Episodes[ep.ID] >= len(ep.Turns) {
			continue
		}
		if !hasRole(ep.Turns, imprint.RoleAssistant) {
			if !final {
				continue // the request is still being answered
			}
			ep.ClosedBy = imprint.ClosedAbandoned
			ep.Status = imprint.EpisodeAbandoned
		}
		ep.SessionID = sid
		ep = scopedEpisode(ep, h.Scope)
		if err := h.API.SubmitEpisode(ctx, ep); err != nil {
			return sid, fmt.Errorf("post episode %s: %w", ep.ID, err)
		}
		st.Episodes[ep.ID] = len(ep.Turns)
		if err := saveHookState(statePath, st); err != nil {
			return sid, err
		}
	}
	return sid, nil
}

// workspace is the workspace a hook of the session recalls in: the one
// its records were posted with (st, else the session's state file), else
// the payload's cwd.
func (h *ClaudeCodeHook) workspace(p hookPayload, st hookState) string {
	if st.Workspace == "" && p.SessionID != "" {
		st = loadHookState(h.statePath(p.SessionID))
	}
	if st.Workspace != "" {
		return st.Workspace
	}
	return strings.TrimSpace(p.Cwd)
}

func hasRole(turns []imprint.Turn, r imprint.Role) bool {
	for _, t := range turns {
		if t.Role == r {
			return true
		}
	}
	return false
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// statePath is the state file of a session's hooks, in the scope's folder
// under <data dir>/hooks/claude-code.
func (h *ClaudeCodeHook) statePath(sessionID string) string {
	name := sessionID
	if !safeName.MatchString(name) || strings.HasPrefix(name, ".") {
		sum := sha256.Sum256([]byte(sessionID))
		name = hex.EncodeToString(sum[:16])
	}
	sum := sha256.Sum256([]byte(h.Scope.String()))
	return filepath.Join(h.DataDir, "hooks", "claude-code", hex.EncodeToString(sum[:8]), name+".json")
}

// loadHookState reads a state file; a missing or unreadable one is empty
// (the service's idempotent ids make reposting harmless).
func loadHookState(path string) hookState {
	st := hookState{Messages: map[string]bool{}, Episodes: map[string]int{}}
	b, err := os.ReadFile(path)
	if err != nil {
		return st
	}
	var s hookState
	if json.Unmarshal(b, &s) != nil {
		return st
	}
	if s.Messages != nil {
		st.Messages = s.Messages
	}
	if s.Episodes != nil {
		st.Episodes = s.Episodes
	}
	st.Started, st.Workspace = s.Started, s.Workspace
	return st
}

// saveHookState writes the state file atomically.
func saveHookState(path string, st hookState) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save hook state: %w", err)
	}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("save hook state: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".state-*")
	if err != nil {
		return fmt.Errorf("save hook state: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("save hook state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save hook state: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save hook state: %w", err)
	}
	return nil
}
