package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/eval"
	"github.com/imprint-dev/imprint/ingest"
)

func newEvalCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure retrieval on a benchmark with known answers",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "locomo FILE",
		Short: "Recall@1/5/10 of LoCoMo evidence turns for search and recall, beside a BM25 baseline",
		Long: "eval locomo imports FILE (LoCoMo conversations with their qa lists) into a fresh data\n" +
			"folder in the temporary directory, exactly as imprint import does, with the configuration\n" +
			"in effect (only the data dir is replaced; no LLM and the hash embedder by default). It then\n" +
			"asks every question of categories 1-4 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop)\n" +
			"through message, memory and all-kinds search (limit 10) and the recall block (1000 tokens),\n" +
			"and prints recall@1/5/10 of the evidence turns per category and overall, with query latency,\n" +
			"beside a plain BM25 baseline over the raw turns. With --json it prints one report object.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := eval.RunLoCoMo(cmd.Context(), args[0], func(ctx context.Context, dir string) (eval.System, func() error, error) {
				ev := a.node.WithDataDir(dir)
				var o ingest.Options
				a.importOptions(&o)
				sys, err := ev.EvalSystem(ctx, o, args[0])
				return sys, ev.Close, err
			})
			if err != nil {
				return err
			}
			return a.Print(rep, rep.WriteText)
		},
	})
	return cmd
}
