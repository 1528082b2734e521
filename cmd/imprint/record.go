package main

import (
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/clitext"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/wire"
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
			if len(args) == 0 {
				args = []string{"-"}
			}
			type batch struct {
				session string
				scope   imprint.Scope
				msgs    []imprint.Message
				people  bool // between_people
			}
			var batches []batch
			for _, name := range args {
				var r io.Reader = a.Stdin
				if name != "-" {
					f, err := os.Open(name)
					if err != nil {
						return imprint.Invalidf("%s: %v", name, err)
					}
					defer f.Close()
					r = f
				}
				doc, err := wire.ReadMessageDoc(r, name, session)
				if err != nil {
					return err
				}
				if strings.TrimSpace(doc.SessionID) == "" {
					return imprint.Invalidf("%s: session is required: give --session or a session_id in the input", name)
				}
				scope := a.Scope()
				if doc.Scope != nil {
					scope = doc.Scope.WithDefaults()
				}
				batches = append(batches, batch{doc.SessionID, scope, doc.Messages, doc.BetweenPeople})
			}
			if c, err := a.remoteClient(cmd, server, token); err != nil {
				return err
			} else if c != nil {
				for _, b := range batches {
					if b.people {
						return imprint.Invalidf("between_people: not supported with --server yet (POST /v1/messages does not take it); record locally")
					}
					res, err := c.Record(ctx, b.scope, b.session, b.msgs)
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
				res, err := rec.RecordSession(ctx, b.scope, record.Session{SessionID: b.session, Messages: b.msgs, BetweenPeople: b.people})
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
