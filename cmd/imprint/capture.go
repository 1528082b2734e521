package main

import (
	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/internal/clitext"
	"github.com/imprint-dev/imprint/wire"
)

func newCaptureCmd(a *App) *cobra.Command {
	return addServerFlags(&cobra.Command{
		Use:   "capture [FILE|-]...",
		Short: "Capture episodes (imprint JSON) into scored, embedded traces",
		Long: "capture reads episodes (one episode JSON, a JSON array of episodes, or JSONL of\n" +
			"episodes; '-' or no file reads stdin) and turns each into traces. The whole input\n" +
			"is validated first: bad input exits 2 and stores nothing.",
		RunE: func(cmd *cobra.Command, args []string) error {
			eps, err := ingest.ReadEpisodeFiles(a.Stdin, args, func(w wire.Warning) {
				a.Logger.Warn("input skipped", "file", w.File, "line", w.Line, "detail", w.Message)
			})
			if err != nil {
				return err
			}
			acc, err := a.access(cmd, false)
			if err != nil {
				return err
			}
			return acc.Capture(cmd.Context(), a.Scope(), eps, func(res capture.Result) error { return a.Print(res, res.WriteText) })
		},
	})
}

func newTracesCmd(a *App) *cobra.Command {
	var f imprint.TraceFilter
	cmd := &cobra.Command{
		Use:   "traces",
		Short: "List traces in step order",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.Check(); err != nil {
				return err
			}
			acc, err := a.access(cmd, false)
			if err != nil {
				return err
			}
			trs, err := acc.ListTraces(cmd.Context(), a.Scope(), f)
			if err != nil {
				return err
			}
			return printList(a, trs, clitext.Traces)
		},
	}
	cmd.Flags().StringVar(&f.EpisodeID, "episode", "", "only traces of this episode")
	cmd.Flags().StringVar(&f.SessionID, "session", "", "only traces of this session")
	listFlags(cmd, &f.Workspace, &f.Limit, "traces")
	return addServerFlags(cmd)
}
