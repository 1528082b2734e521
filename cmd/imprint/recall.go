package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/search"
)

func newRecallCmd(a *App) *cobra.Command {
	var session, workspace, server, token string
	var budget int
	cmd := &cobra.Command{
		Use:   "recall QUERY",
		Short: "Print the context block an agent injects before answering (standing instructions first)",
		Long: "recall prints what an agent should know before answering QUERY, within a token budget:\n" +
			"the scope's standing instructions, then the most relevant live memories (scope-wide),\n" +
			"then the most relevant traces (of --session when given). With --json it prints\n" +
			"{context, hits}. With --server it asks a running imprint serve.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if budget < 0 {
				return imprint.Invalidf("--budget-tokens must not be negative")
			}
			if err := imprint.ValidateWorkspace("--workspace", workspace); err != nil {
				return err
			}
			q := imprint.RecallQuery{Scope: a.Scope(), Text: strings.Join(args, " "), SessionID: session, Workspace: workspace, BudgetTokens: budget}
			var res imprint.RecallResult
			c, err := a.remoteClient(cmd, server, token)
			if err != nil {
				return err
			}
			if c != nil {
				if res, err = c.Recall(ctx, q); err != nil {
					return err
				}
			} else {
				s, err := a.searcher(ctx)
				if err != nil {
					return err
				}
				st, err := a.Store(ctx)
				if err != nil {
					return err
				}
				r := search.Recaller{Searcher: s, Memories: st, Traces: st, Messages: st}
				if res, err = r.Recall(ctx, q); err != nil {
					return err
				}
			}
			if a.JSON {
				return a.PrintJSON(res)
			}
			if strings.TrimSpace(res.Context) == "" {
				fmt.Fprintln(a.Stderr, "imprint: nothing to recall")
				return nil
			}
			a.Printf("%s\n", strings.TrimRight(res.Context, "\n"))
			return nil
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "recall the traces of this session")
	cmd.Flags().StringVar(&workspace, "workspace", "", "recall in this workspace (project): its records and those of no workspace; default: every workspace")
	cmd.Flags().IntVar(&budget, "budget-tokens", imprint.DefaultRecallBudget, "token budget of the context block")
	addServerFlags(cmd, &server, &token)
	return cmd
}
