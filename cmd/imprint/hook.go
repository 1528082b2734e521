package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/ingest"
)

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
			h := &ingest.ClaudeCodeHook{API: api, Scope: a.Scope(), DataDir: a.Config.DataDir, RecallBudget: budget}
			text, err := h.Run(ctx, args[0], a.Stdin)
			if err != nil {
				return withExitCode(exitFailure, err)
			}
			if strings.TrimSpace(text) != "" {
				a.Printf("%s\n", strings.TrimRight(text, "\n"))
			}
			return nil
		},
	}
	addServerFlags(cc, &server, &token)
	cc.Flags().IntVar(&budget, "budget-tokens", hookRecallBudget, "token budget of the recalled context (UserPromptSubmit)")
	hook.AddCommand(cc)
	return hook
}
