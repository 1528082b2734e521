package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/eval"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/search"
)

func newEvalCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure retrieval on a benchmark with known answers",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newEvalLoCoMoCmd(a))
	return cmd
}

func newEvalLoCoMoCmd(a *App) *cobra.Command {
	return &cobra.Command{
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
			return a.runEvalLoCoMo(cmd.Context(), args[0])
		},
	}
}

func (a *App) runEvalLoCoMo(ctx context.Context, path string) error {
	rep, err := eval.RunLoCoMo(ctx, path, func(ctx context.Context, dir string) (eval.System, func() error, error) {
		ev := a.evalApp(dir)
		sys, err := ev.importForEval(ctx, path)
		return sys, ev.Close, err
	})
	if err != nil {
		return err
	}
	return a.Print(rep, rep.WriteText)
}

// evalApp is an App like a (configuration, scope, logger, environment)
// whose data dir is dir.
func (a *App) evalApp(dir string) *App {
	ev := newApp(a.lookupEnv, strings.NewReader(""), io.Discard, a.Stderr)
	cfg := *a.Config
	cfg.DataDir = dir
	ev.Config = &cfg
	ev.Logger = a.Logger
	ev.scope = a.scope
	ev.isTerminal = a.isTerminal
	ev.started = true
	return ev
}

// importForEval imports the LoCoMo file at path with imprint import's own
// code (record, capture, extract) into a's store and returns the store
// with the searcher and recaller imprint search and recall would use.
func (a *App) importForEval(ctx context.Context, path string) (eval.System, error) {
	start := time.Now()
	sum, err := a.importPaths(ctx, importOptions{format: importer.FormatLoCoMo, tz: "UTC"}, []string{path})
	if err != nil {
		return eval.System{}, fmt.Errorf("eval: import %s: %w", path, err)
	}
	took := time.Since(start)
	st, err := a.Store(ctx)
	if err != nil {
		return eval.System{}, err
	}
	s, err := a.searcher(ctx)
	if err != nil {
		return eval.System{}, err
	}
	m, err := a.LLM()
	if err != nil {
		return eval.System{}, err
	}
	extractor, embedder := "heuristic", ""
	if m != nil {
		extractor = a.Config.LLM.Provider + " " + a.Config.LLM.Model
	}
	if s.Embedder != nil {
		embedder = s.Embedder.Name()
	}
	return eval.System{
		Scope: a.Scope(), Store: st, Searcher: s, Imported: eval.ImportedFrom(sum, took, extractor, embedder),
		Recaller: search.Recaller{Searcher: s, Memories: st, Traces: st, Messages: st},
	}, nil
}
