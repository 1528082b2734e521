package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/internal/clitext"
	"github.com/imprint-dev/imprint/record"
)

func newRecordCmd(a *App) *cobra.Command {
	var session, server, token string
	cmd := &cobra.Command{
		Use:   "record --session KEY [FILE|-]...",
		Short: "Append L0 messages to a session (never runs extraction itself)",
		Long: "record reads messages (an object {session_id, scope, messages:[...]} or JSONL of\n" +
			"message objects; '-' or no file reads stdin), sanitizes and redacts them, and\n" +
			"appends the new ones to the session. When extraction.every_n_rounds user messages\n" +
			"have arrived since the last extraction, the session is marked due (imprint serve or\n" +
			"imprint extract carries it out).",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			batches, err := ingest.ReadMessageFiles(a.Stdin, args, session, a.Scope())
			if err != nil {
				return err
			}
			if c, err := a.remoteClient(cmd, server, token); err != nil {
				return err
			} else if c != nil {
				for _, b := range batches {
					if b.BetweenPeople {
						return imprint.Invalidf("between_people: not supported with --server yet (POST /v1/messages does not take it); record locally")
					}
					res, err := c.Record(ctx, b.Scope, b.SessionID, b.Messages)
					if err != nil {
						return err
					}
					if err := a.Print(res, func(w io.Writer) error { return clitext.Record(w, res) }); err != nil {
						return err
					}
				}
				return nil
			}
			rec, err := a.l0Recorder(ctx)
			if err != nil {
				return err
			}
			for _, b := range batches {
				res, err := rec.RecordSession(ctx, b.Scope, record.Session{SessionID: b.SessionID, Messages: b.Messages, BetweenPeople: b.BetweenPeople})
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
	addServerFlags(cmd, &server, &token)
	return cmd
}
