package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/curate"
)

func newExportCmd(a *App) *cobra.Command {
	var kind, format, out string
	var o curate.ExportOptions
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
			var err error
			if o.Kinds, err = imprint.ParseKind(kind); err != nil {
				return err
			}
			st, err := a.node.Store(cmd.Context())
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				if _, err := curate.Export(cmd.Context(), st, a.Scope(), o, a.Stdout); err != nil {
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
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "only this workspace's records (default: every workspace of the scope)")
	return cmd
}
