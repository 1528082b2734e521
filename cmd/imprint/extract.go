package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/extract"
)

func newExtractCmd(a *App) *cobra.Command {
	var session, server, token string
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
			ctx := cmd.Context()
			if session != "" && all {
				return imprint.Invalidf("--session and --all exclude each other")
			}
			if c, err := a.remoteClient(cmd, server, token); err != nil {
				return err
			} else if c != nil {
				return a.remoteExtract(ctx, c, session)
			}
			r, err := a.extractRunner(ctx)
			if err != nil {
				return err
			}
			st, err := a.Store(ctx)
			if err != nil {
				return err
			}
			sessions := []string{session}
			if session == "" {
				ss, err := st.ListSessions(ctx, a.Scope())
				if err != nil {
					return err
				}
				sessions = sessions[:0]
				for _, s := range ss {
					sessions = append(sessions, s.ID)
				}
			} else if _, err := st.GetSession(ctx, a.Scope(), session); err != nil {
				if errors.Is(err, imprint.ErrNotFound) {
					return imprint.Invalidf("--session %q: no such session in scope %s", session, a.Scope())
				}
				return err
			}
			var windows, stored int
			for _, sid := range sessions {
				var printErr error
				err := r.ExtractPending(ctx, a.Scope(), sid, func(res extract.Result) {
					if len(res.MessageIDs) == 0 && res.Success {
						return
					}
					windows++
					stored += res.StoredCount
					if printErr == nil {
						printErr = a.Print(res, res.WriteText)
					}
				})
				if printErr != nil {
					return printErr
				}
				if err != nil {
					return withExitCode(exitFailure, fmt.Errorf("extract session %s: %w", sid, err))
				}
			}
			if !a.JSON {
				a.Printf("%d windows, %d memories stored or updated\n", windows, stored)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "extract this session only")
	cmd.Flags().BoolVar(&all, "all", false, "extract every session of the scope")
	addServerFlags(cmd, &server, &token)
	return cmd
}
