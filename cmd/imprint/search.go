package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/clitext"
)

func newSearchCmd(a *App) *cobra.Command {
	var kind, session, workspace, server, token string
	var limit int
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Hybrid recall: keyword (BM25) and vector results fused by RRF",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kinds, err := imprint.ParseKind(kind)
			if err != nil {
				return err
			}
			if limit <= 0 {
				return imprint.Invalidf("--limit must be positive")
			}
			if err := imprint.ValidateWorkspace("--workspace", workspace); err != nil {
				return err
			}
			q := imprint.SearchQuery{Scope: a.Scope(), Text: strings.Join(args, " "), Kinds: kinds, SessionID: session, Workspace: workspace, Limit: limit}
			var hits []imprint.Hit
			if c, err := a.remoteClient(cmd, server, token); err != nil {
				return err
			} else if c != nil {
				if hits, err = c.Search(cmd.Context(), q); err != nil {
					return err
				}
			} else {
				s, err := a.searcher(cmd.Context())
				if err != nil {
					return err
				}
				if hits, err = s.Search(cmd.Context(), q); err != nil {
					return err
				}
			}
			return printList(a, hits, clitext.Hits)
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "all", "memory, trace, message or all")
	cmd.Flags().StringVar(&session, "session", "", "only records of this session")
	cmd.Flags().StringVar(&workspace, "workspace", "", workspaceUsage)
	cmd.Flags().IntVar(&limit, "limit", 10, "at most this many hits")
	addServerFlags(cmd, &server, &token)
	return cmd
}
