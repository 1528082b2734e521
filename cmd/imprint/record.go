package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/internal/clitext"
)

func newRecordCmd(a *App) *cobra.Command {
	var session string
	cmd := &cobra.Command{
		Use:   "record --session KEY [FILE|-]...",
		Short: "Append L0 messages to a session (never runs extraction itself)",
		Long: "record reads messages (an object {session_id, scope, messages:[...]} or JSONL of\n" +
			"message objects; '-' or no file reads stdin), sanitizes and redacts them, and\n" +
			"appends the new ones to the session. When extraction.every_n_rounds user messages\n" +
			"have arrived since the last extraction, the session is marked due (imprint serve or\n" +
			"imprint extract carries it out).",
		RunE: func(cmd *cobra.Command, args []string) error {
			batches, err := ingest.ReadMessageFiles(a.Stdin, args, session, a.Scope())
			if err != nil {
				return err
			}
			acc, err := a.access(cmd, false)
			if err != nil {
				return err
			}
			for _, b := range batches {
				res, err := acc.Record(cmd.Context(), b)
				if err != nil {
					return err
				}
				if err := a.Print(res, func(w io.Writer) error { return clitext.Record(w, res) }); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "session key the messages belong to")
	return addServerFlags(cmd)
}
