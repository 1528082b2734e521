package main

import (
	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/clitext"
)

func newMemoriesCmd(a *App) *cobra.Command {
	var session, typ, workspace, server, token string
	var all bool
	var limit int
	cmd := &cobra.Command{
		Use:   "memories",
		Short: "List memories, newest first (superseded ones only with --all-versions)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if typ != "" && !imprint.MemoryType(typ).Valid() {
				return imprint.Invalidf("--type %q: want persona, episodic or instruction", typ)
			}
			if limit < 0 {
				return imprint.Invalidf("--limit must not be negative")
			}
			if err := imprint.ValidateWorkspace("--workspace", workspace); err != nil {
				return err
			}
			f := imprint.MemoryFilter{SessionID: session, Type: imprint.MemoryType(typ), Workspace: workspace, AllVersions: all, Limit: limit}
			if limit == 0 {
				f.Limit = imprint.NoLimit
			}
			var ms []imprint.Memory
			if c, err := a.remoteClient(cmd, server, token); err != nil {
				return err
			} else if c != nil {
				if ms, err = c.Memories(cmd.Context(), a.Scope(), f); err != nil {
					return err
				}
			} else {
				st, err := a.Store(cmd.Context())
				if err != nil {
					return err
				}
				if ms, err = st.ListMemories(cmd.Context(), a.Scope(), f); err != nil {
					return err
				}
			}
			return printList(a, ms, clitext.Memories)
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "only memories extracted from this session")
	cmd.Flags().StringVar(&typ, "type", "", "persona, episodic or instruction")
	cmd.Flags().StringVar(&workspace, "workspace", "", workspaceUsage)
	cmd.Flags().BoolVar(&all, "all-versions", false, "include superseded versions")
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many memories (0 for all)")
	addServerFlags(cmd, &server, &token)
	return cmd
}

// workspaceUsage is the help of --workspace on listings and searches.
const workspaceUsage = "only records of this workspace (project); default: every workspace of the scope"
