package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/internal/clitext"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/extract"
)

func newExtractCmd(a *App) *cobra.Command {
	var session string
	var all bool
	cmd := &cobra.Command{
		Use:   "extract",
		Short: "Extract memories from pending messages now, window after window",
		Long: "extract runs memory extraction over the pending messages of one session (--session)\n" +
			"or of every session of the scope (--all, or no flag), oldest window first, until none\n" +
			"is pending. It stops at the first failed window and exits 1 after printing its result;\n" +
			"the messages of a failed window stay pending.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if session != "" && all {
				return imprint.Invalidf("--session and --all exclude each other")
			}
			acc, err := a.access(cmd, false)
			if err != nil {
				return err
			}
			var tot ingest.ExtractTotals
			err = acc.Extract(cmd.Context(), a.Scope(), session, func(res extract.Result) error {
				tot.Add(res)
				return a.Print(res, res.WriteText)
			})
			if errors.As(err, new(*ingest.WindowError)) {
				return clitext.WithExitCode(clitext.ExitFailure, err) // a failed window, printed
			} else if err != nil {
				return err
			}
			if a.JSON {
				return nil // the windows are the output
			}
			return tot.WriteText(a.Stdout)
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "extract this session only")
	cmd.Flags().BoolVar(&all, "all", false, "extract every session of the scope")
	return addServerFlags(cmd)
}
