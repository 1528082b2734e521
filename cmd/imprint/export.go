package main

import (
	"context"
	"fmt"
	"io"
	"os"
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
			var w io.Writer = a.Stdout
			var tmp *os.File
			if out != "" && out != "-" {
				// Written beside the target and renamed, so a failed
				// export never leaves half a file under its name.
				if tmp, err = os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*"); err != nil {
					return imprint.Invalidf("--out %s: %v", out, err)
				}
				defer os.Remove(tmp.Name())
				w = tmp
			}
			stats, err := curate.Export(cmd.Context(), st, a.Scope(), curate.ExportOptions{Kinds: kinds, Workspace: workspace}, w)
			if tmp != nil {
				if cerr := tmp.Close(); err == nil {
					err = cerr
				}
				if err == nil {
					err = os.Rename(tmp.Name(), out)
				}
			}
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			if tmp != nil {
				fmt.Fprintf(a.Stderr, "imprint: exported %d sessions, %d messages, %d memories, %d episodes, %d traces to %s\n",
					stats.Sessions, stats.Messages, stats.Memories, stats.Episodes, stats.Traces, out)
			}
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
	n := 0
	for _, p := range paths {
		if curate.IsExport(p) {
			n++
		}
	}
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
	var total curate.ExportStats
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return true, imprint.Invalidf("import %s: %v", p, err)
		}
		stats, err := curate.Restore(ctx, curate.RestoreDeps{Store: st, Embedder: emb, Records: records, Conversations: conv}, f)
		f.Close()
		if err != nil {
			return true, fmt.Errorf("restore %s: %w", p, err)
		}
		total.Sessions += stats.Sessions
		total.Messages += stats.Messages
		total.Memories += stats.Memories
		total.Episodes += stats.Episodes
		total.Traces += stats.Traces
	}
	if a.JSON {
		return true, a.PrintJSON(map[string]any{"restored": total})
	}
	a.Printf("restored %d sessions, %d messages, %d memories, %d episodes, %d traces\n",
		total.Sessions, total.Messages, total.Memories, total.Episodes, total.Traces)
	return true, nil
}
