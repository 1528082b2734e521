package main

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

	"github.com/spf13/cobra"

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
)

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
}

// hookAPI is what the Claude Code hook needs from a running imprint serve.
type hookAPI interface {
	recordMessages(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) error
	submitEpisode(ctx context.Context, ep imprint.Episode) error
	endSession(ctx context.Context, scope imprint.Scope, sessionID string) error
	recall(ctx context.Context, scope imprint.Scope, query, sessionID string, budgetTokens int) (string, error)
}

// hookRecallBudget is the token budget of the context a prompt hook injects.
const hookRecallBudget = 1200

func newHookCmd(a *App) *cobra.Command {
	hook := &cobra.Command{
		Use:   "hook",
		Short: "Agent host hooks that feed a running imprint serve",
	}
	var server, token string
	var budget int
	cc := &cobra.Command{
		Use:   "claude-code EVENT",
		Short: "Claude Code hook: Stop, SubagentStop, SessionEnd or UserPromptSubmit (payload on stdin)",
		Long: "claude-code reads the hook payload Claude Code writes on stdin and talks to imprint serve\n" +
			"(--server, env IMPRINT_SERVER, default http://<server.addr>):\n" +
			"  Stop, SubagentStop   post the transcript's messages and finished episodes not yet posted\n" +
			"  SessionEnd           the same, then end the session (forces extraction)\n" +
			"  UserPromptSubmit     print recalled memory for the prompt (Claude Code adds it to the context)\n" +
			"What was posted is tracked per session under <data dir>/hooks/claude-code; the service\n" +
			"skips message ids it already has, so running a hook twice records nothing twice.\n" +
			"A failure exits 1 (Claude Code shows it and carries on), never 2 (which would block).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			api, err := a.hookClient(cmd, server, token)
			if err != nil {
				return withExitCode(exitFailure, err)
			}
			if err := a.runClaudeCodeHook(ctx, api, args[0], budget); err != nil {
				return withExitCode(exitFailure, err)
			}
			return nil
		},
	}
	addServerFlags(cc, &server, &token)
	cc.Flags().IntVar(&budget, "budget-tokens", hookRecallBudget, "token budget of the recalled context (UserPromptSubmit)")
	hook.AddCommand(cc)
	return hook
}

// runClaudeCodeHook handles one Claude Code hook event.
func (a *App) runClaudeCodeHook(ctx context.Context, api hookAPI, event string, budget int) error {
	raw, err := io.ReadAll(io.LimitReader(a.Stdin, 1<<20))
	if err != nil {
		return fmt.Errorf("read hook payload: %w", err)
	}
	var p hookPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return imprint.Invalidf("hook payload on stdin is not a JSON object: %v", err)
	}
	ev := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(event))
	if ev == "" || ev == "auto" {
		ev = strings.ToLower(p.HookEventName)
	}
	switch ev {
	case hookUserPromptSubmit:
		if strings.TrimSpace(p.Prompt) == "" {
			return nil
		}
		text, err := api.recall(ctx, a.Scope(), p.Prompt, p.SessionID, budget)
		if err != nil {
			return fmt.Errorf("recall: %w", err)
		}
		if strings.TrimSpace(text) != "" {
			a.Printf("%s\n", strings.TrimRight(text, "\n"))
		}
		return nil
	case hookStop, hookSubagentStop:
		_, err := a.syncClaudeCode(ctx, api, p, false)
		return err
	case hookSessionEnd:
		sid, err := a.syncClaudeCode(ctx, api, p, true)
		if err != nil {
			return err
		}
		if sid == "" {
			return imprint.Invalidf("hook payload has no session_id")
		}
		if err := api.endSession(ctx, a.Scope(), sid); err != nil {
			return fmt.Errorf("end session %s: %w", sid, err)
		}
		return nil
	}
	return imprint.Invalidf("unknown Claude Code hook event %q: want Stop, SubagentStop, SessionEnd or UserPromptSubmit", event)
}

// hookState is what a session's hooks have posted so far.
type hookState struct {
	Messages map[string]bool `json:"messages"`
	// Episodes maps an episode id to the number of turns posted.
	Episodes map[string]int `json:"episodes"`
}

// syncClaudeCode posts the transcript's messages and episodes that were not
// posted yet (an episode again when it grew) and returns the session id.
// With final, an episode without an assistant turn is posted as abandoned;
// otherwise it is left for a later hook.
func (a *App) syncClaudeCode(ctx context.Context, api hookAPI, p hookPayload, final bool) (string, error) {
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
	statePath := a.hookStatePath(sid)
	st := loadHookState(statePath)

	var msgs []imprint.Message
	for _, m := range tr.Messages {
		if !st.Messages[m.ID] {
			m.Scope = imprint.Scope{}
			msgs = append(msgs, m)
		}
	}
	if len(msgs) > 0 {
		if err := api.recordMessages(ctx, a.Scope(), sid, msgs); err != nil {
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
		ep.Scope = a.Scope()
		ep.SessionID = sid
		if err := api.submitEpisode(ctx, ep); err != nil {
			return sid, fmt.Errorf("post episode %s: %w", ep.ID, err)
		}
		st.Episodes[ep.ID] = len(ep.Turns)
		if err := saveHookState(statePath, st); err != nil {
			return sid, err
		}
	}
	return sid, nil
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

// hookStatePath is the state file of a session's hooks, in the scope's
// folder under <data dir>/hooks/claude-code.
func (a *App) hookStatePath(sessionID string) string {
	name := sessionID
	if !safeName.MatchString(name) || strings.HasPrefix(name, ".") {
		sum := sha256.Sum256([]byte(sessionID))
		name = hex.EncodeToString(sum[:16])
	}
	sum := sha256.Sum256([]byte(a.Scope().String()))
	return filepath.Join(a.Config.DataDir, "hooks", "claude-code", hex.EncodeToString(sum[:8]), name+".json")
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
