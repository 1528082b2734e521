package main

import (
	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/clitext"
)

func newMemoriesCmd(a *App) *cobra.Command {
	var f imprint.MemoryFilter
	cmd := &cobra.Command{
		Use:   "memories",
		Short: "List memories, newest first (superseded ones only with --all-versions)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.Check(); err != nil {
				return err
			}
			acc, err := a.access(cmd, false)
			if err != nil {
				return err
			}
			ms, err := acc.ListMemories(cmd.Context(), a.Scope(), f)
			if err != nil {
				return err
			}
			return printList(a, ms, clitext.Memories)
		},
	}
	cmd.Flags().StringVar(&f.SessionID, "session", "", "only memories extracted from this session")
	cmd.Flags().StringVar((*string)(&f.Type), "type", "", "persona, episodic or instruction")
	cmd.Flags().BoolVar(&f.AllVersions, "all-versions", false, "include superseded versions")
	listFlags(cmd, &f.Workspace, &f.Limit, "memories")
	return addServerFlags(cmd)
}

// workspaceFlag adds --workspace, the filter of listings and searches.
func workspaceFlag(cmd *cobra.Command, workspace *string) {
	cmd.Flags().StringVar(workspace, "workspace", "", "only records of this workspace (project); default: every workspace of the scope")
}

// listFlags adds the flags of a listing of what: --workspace and --limit.
func listFlags(cmd *cobra.Command, workspace *string, limit *int, what string) {
	workspaceFlag(cmd, workspace)
	cmd.Flags().IntVar(limit, "limit", 100, "at most this many "+what+" (0 for all)")
}
