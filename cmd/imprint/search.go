package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/clitext"
)

func newSearchCmd(a *App) *cobra.Command {
	var kind string
	var q imprint.SearchQuery
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Hybrid recall: keyword (BM25) and vector results fused by RRF",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kinds, err := imprint.ParseKind(kind)
			if err != nil {
				return err
			}
			if err := q.Check(); err != nil {
				return err
			}
			acc, err := a.access(cmd, false)
			if err != nil {
				return err
			}
			q.Scope, q.Text, q.Kinds = a.Scope(), strings.Join(args, " "), kinds
			hits, err := acc.Search(cmd.Context(), q)
			if err != nil {
				return err
			}
			return printList(a, hits, clitext.Hits)
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "all", "memory, trace, message or all")
	cmd.Flags().StringVar(&q.SessionID, "session", "", "only records of this session")
	workspaceFlag(cmd, &q.Workspace)
	cmd.Flags().IntVar(&q.Limit, "limit", imprint.DefaultSearchLimit, fmt.Sprintf("at most this many hits (at most %d)", imprint.MaxSearchLimit))
	return addServerFlags(cmd)
}

func newRecallCmd(a *App) *cobra.Command {
	var q imprint.RecallQuery
	cmd := &cobra.Command{
		Use:   "recall QUERY",
		Short: "Print the context block an agent injects before answering (standing instructions first)",
		Long: "recall prints what an agent should know before answering QUERY, within a token budget:\n" +
			"the scope's standing instructions, then the most relevant live memories (scope-wide),\n" +
			"then the most relevant traces (of --session when given). With --json it prints\n" +
			"{context, hits}. With --server it asks a running imprint serve.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := q.Check(); err != nil {
				return err
			}
			acc, err := a.access(cmd, false)
			if err != nil {
				return err
			}
			q.Scope, q.Text = a.Scope(), strings.Join(args, " ")
			res, err := acc.Recall(cmd.Context(), q)
			if err != nil {
				return err
			}
			return a.Print(res, func(w io.Writer) error { return clitext.Recall(w, a.Stderr, res) })
		},
	}
	cmd.Flags().StringVar(&q.SessionID, "session", "", "recall the traces of this session")
	cmd.Flags().StringVar(&q.Workspace, "workspace", "", "recall in this workspace (project): its records and those of no workspace; default: every workspace")
	cmd.Flags().IntVar(&q.BudgetTokens, "budget-tokens", imprint.DefaultRecallBudget, "token budget of the context block")
	return addServerFlags(cmd)
}
