package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/shard"
)

// This file is imprint export and the restore of an export by imprint
// import (curate.Export, curate.Restore).

func newExportCmd(a *App) *cobra.Command {
	var kind, format, out, workspace string
	cmd := &cobra.Command{
		Use:   "export [--kind memory|trace|message|all] [--format jsonl] [--out FILE] [--workspace W]",
		Short: "Write everything of the scope (memories with versions and sources, traces, messages) as JSON lines",
		Long: "export writes the scope's records as JSON lines to stdout or --out: a header, sessions\n" +
			"with their messages, every memory version (superseded and forgotten ones too) and\n" +
			"episodes with their traces. `imprint import --format imprint FILE` restores it, with\n" +
			"the same ids, into another data dir.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "jsonl" {
				return imprint.Invalidf("--format %q: want jsonl", format)
			}
			kinds, err := imprint.ParseKind(kind)
			if err != nil {
				return err
			}
			st, err := a.Store(cmd.Context())
			if err != nil {
				return err
			}
			o := curate.ExportOptions{Kinds: kinds, Workspace: workspace}
			if out == "" || out == "-" {
				_, err := curate.Export(cmd.Context(), st, a.Scope(), o, a.Stdout)
				if err != nil {
					return fmt.Errorf("export: %w", err)
				}
				return nil
			}
			stats, err := curate.ExportFile(cmd.Context(), st, a.Scope(), o, out)
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			fmt.Fprintf(a.Stderr, "imprint: exported %s to %s\n", stats, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "all", "memory, trace, message or all")
	cmd.Flags().StringVar(&format, "format", "jsonl", "jsonl (the only format)")
	cmd.Flags().StringVar(&out, "out", "", "write to this file instead of stdout")
	cmd.Flags().StringVar(&workspace, "workspace", "", "only this workspace's records (default: every workspace of the scope)")
	return cmd
}

// restoreExports restores the paths when they are imprint exports (and
// --format is imprint or auto), and reports whether it did. A mix of
// exports and transcripts is ErrInvalid.
func (a *App) restoreExports(ctx context.Context, o importOptions, paths []string) (bool, error) {
	if o.format != "imprint" && o.format != "auto" {
		return false, nil
	}
	n := curate.CountExports(paths)
	switch {
	case n == 0:
		return false, nil
	case n < len(paths):
		return true, imprint.Invalidf("import: give imprint exports and transcripts in separate imports")
	case o.dryRun:
		return true, imprint.Invalidf("import: --dry-run does not apply to restoring an export")
	}
	release, err := ingest.LockImport(ctx, a.Config.DataDir, o.noWait, func(path, holder string) {
		fmt.Fprintf(a.Stderr, "imprint: waiting for the import lock %s held by pid %s\n", path, holder)
	})
	if err != nil {
		return true, err
	}
	defer release()
	st, err := a.Store(ctx)
	if err != nil {
		return true, err
	}
	emb, err := a.Embedder()
	if err != nil {
		return true, err
	}
	records, err := shard.NewWriter(filepath.Join(a.Config.DataDir, "records"))
	if err != nil {
		return true, err
	}
	conv, err := shard.NewWriter(filepath.Join(a.Config.DataDir, "conversations"))
	if err != nil {
		return true, err
	}
	total, err := curate.RestoreFiles(ctx, curate.RestoreDeps{Store: st, Embedder: emb, Records: records, Conversations: conv}, paths)
	if err != nil {
		return true, err
	}
	return true, a.Print(map[string]any{"restored": total}, total.WriteText)
}
