package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/internal/clitext"

	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/ingest"
)

// hookRecallBudget is the token budget of the context a prompt hook injects.
const hookRecallBudget = 1200

func newHookCmd(a *App) *cobra.Command {
	hook := &cobra.Command{
		Use:   "hook",
		Short: "Agent host hooks that feed a running imprint serve",
		// A typo'd host must not print help on stdout, which the host
		// would add to the agent's context: warn and exit 0 (isHook).
		Args: cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("no host given (hosts: claude-code)")
			}
			return fmt.Errorf("unknown host %q (hosts: claude-code)", args[0])
		},
	}
	var budget int
	cc := &cobra.Command{
		Use:   "claude-code EVENT",
		Short: "Claude Code hook: SessionStart, UserPromptSubmit, Stop, SubagentStop or SessionEnd (payload on stdin)",
		Long: "claude-code reads the hook payload Claude Code writes on stdin and talks to imprint serve\n" +
			"(--server, env IMPRINT_SERVER, default http://<server.addr>):\n" +
			"  Stop, SubagentStop   post the transcript's messages and finished episodes not yet posted\n" +
			"  SessionEnd           the same, then end the session (forces extraction)\n" +
			"  UserPromptSubmit     print recalled memory for the prompt (Claude Code adds it to the context)\n" +
			"  SessionStart         print the standing instructions and the user's persona as the session's\n" +
			"                       additionalContext, once per session (again after a compaction)\n" +
			"What was posted is tracked per session under <data dir>/hooks/claude-code; the service\n" +
			"skips message ids it already has, so running a hook twice records nothing twice.\n" +
			"Every event exits 0, whatever fails (a flag typo, a bad config value, a stopped service):\n" +
			"the reason goes to stderr on one line, so a hook never blocks the user's prompt or stop.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, token, err := a.remote(cmd)
			if err != nil {
				return err
			}
			api, err := a.node.HookClient(c, token)
			if err != nil {
				return err
			}
			h := &ingest.ClaudeCodeHook{API: api, Scope: a.ScopeFor(importer.SourceClaudeCode), DataDir: a.Config.DataDir, RecallBudget: budget}
			text, err := h.Run(cmd.Context(), args[0], a.Stdin)
			if err != nil {
				return err
			}
			if strings.TrimSpace(text) != "" {
				a.Printf("%s\n", strings.TrimRight(text, "\n"))
			}
			return nil
		},
	}
	addServerFlags(cc).Flags().IntVar(&budget, "budget-tokens", hookRecallBudget, "token budget of the recalled context (UserPromptSubmit)")
	hook.AddCommand(cc)
	return hook
}

// isHook reports whether args run a hook (imprint hook …, a host's event
// or a typo'd host), which must never fail the host; help for it still
// works as usual.
func isHook(root *cobra.Command, args []string) bool {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil || cmd.Parent() == nil {
		return false
	}
	return cmd.Parent().Name() == "hook" || (cmd.Name() == "hook" && cmd.Parent() == root)
}

// hookWarning reports a hook's failure as one line on stderr and exits 0:
// Claude Code blocks the prompt or the stop on exit 2 and reports any
// other non-zero exit as a hook error; a memory engine must do neither.
func (a *App) hookWarning(err error) int {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Fprintf(a.Stderr, "imprint hook: warning: %s\n", msg)
	return clitext.ExitOK
}
