package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
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
	ds, err := eval.ReadLoCoMoFile(path)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "imprint-eval-")
	if err != nil {
		return fmt.Errorf("eval: data dir: %w", err)
	}
	defer os.RemoveAll(dir)
	var summary bytes.Buffer
	ev := a.evalApp(dir, &summary)
	defer ev.Close()
	sys, err := ev.importForEval(ctx, path, &summary)
	if err != nil {
		return err
	}
	rep, err := eval.Run(ctx, ds, sys, eval.Methods(sys, eval.Options{}), eval.Options{})
	if err != nil {
		return err
	}
	if err := ev.Close(); err != nil {
		return err
	}
	if a.JSON {
		return a.PrintJSON(rep)
	}
	return rep.WriteText(a.Stdout)
}

// evalApp is an App like a (configuration, scope, logger, environment)
// whose data dir is dir and whose standard output is out.
func (a *App) evalApp(dir string, out *bytes.Buffer) *App {
	ev := newApp(a.lookupEnv, strings.NewReader(""), out, a.Stderr)
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
// code (record, capture, extract) into a's store, its JSON summary going
// to out (a's Stdout), and returns the store with the searcher and
// recaller imprint search and recall would use.
func (a *App) importForEval(ctx context.Context, path string, out *bytes.Buffer) (eval.System, error) {
	a.JSON = true
	start := time.Now()
	if err := a.runImport(ctx, importOptions{format: importer.FormatLoCoMo, tz: "UTC"}, []string{path}); err != nil {
		return eval.System{}, fmt.Errorf("eval: import %s: %w", path, err)
	}
	took := time.Since(start)
	var sum importSummary
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		return eval.System{}, fmt.Errorf("eval: import summary: %w", err)
	}
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
	im := eval.Imported{
		Messages: sum.MessagesRecorded, Episodes: sum.Episodes, Traces: sum.Traces,
		Memories: sum.Memories.Store + sum.Memories.Update + sum.Memories.Merge, Warnings: len(sum.Warnings),
		Extractor: "heuristic", Seconds: took.Seconds(),
	}
	if m != nil {
		im.Extractor = a.Config.LLM.Provider + " " + a.Config.LLM.Model
	}
	if s.Embedder != nil {
		im.Embedder = s.Embedder.Name()
	}
	return eval.System{
		Scope: a.Scope(), Store: st, Searcher: s, Imported: im,
		Recaller: search.Recaller{Searcher: s, Memories: st, Traces: st, Messages: st},
	}, nil
}
