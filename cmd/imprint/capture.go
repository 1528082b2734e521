package main

import (
	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/internal/clitext"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/wire"
)

func newCaptureCmd(a *App) *cobra.Command {
	var server, token string
	cmd := &cobra.Command{
		Use:   "capture [FILE|-]...",
		Short: "Capture episodes (imprint JSON) into scored, embedded traces",
		Long: "capture reads episodes (one episode JSON, a JSON array of episodes, or JSONL of\n" +
			"episodes; '-' or no file reads stdin) and turns each into traces. The whole input\n" +
			"is validated first: bad input exits 2 and stores nothing.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			eps, err := a.readEpisodeInputs(args)
			if err != nil {
				return err
			}
			c, err := a.remoteClient(cmd, server, token)
			if err != nil {
				return err
			}
			if c != nil {
				// Validate and redact as the service will, then let it
				// capture: no secret leaves this machine.
				pr := capture.NewRunner(capture.Deps{Redact: redact.String}, capture.DefaultConfig())
				if err := ingest.PrepareEpisodes(pr, eps, a.Scope()); err != nil {
					return err
				}
				return a.remoteCapture(ctx, c, eps)
			}
			r, err := a.captureRunner(ctx)
			if err != nil {
				return err
			}
			// Validate everything before the first capture, so a bad file
			// stores nothing.
			if err := ingest.PrepareEpisodes(r, eps, a.Scope()); err != nil {
				return err
			}
			for _, ep := range eps {
				res, err := r.Run(ctx, ep, "")
				if err != nil {
					return err
				}
				if err := a.Print(res, res.WriteText); err != nil {
					return err
				}
			}
			return nil
		},
	}
	addServerFlags(cmd, &server, &token)
	return cmd
}

// readEpisodeInputs reads every file (or stdin for "-" or no file) as
// imprint episodes, logging the lines it skipped. Invalid input is
// ErrInvalid naming the file and field.
func (a *App) readEpisodeInputs(args []string) ([]imprint.Episode, error) {
	return ingest.ReadEpisodeFiles(a.Stdin, args, func(w wire.Warning) {
		a.Logger.Warn("input skipped", "file", w.File, "line", w.Line, "detail", w.Message)
	})
}

func newTracesCmd(a *App) *cobra.Command {
	var episode, session, workspace, server, token string
	var limit int
	cmd := &cobra.Command{
		Use:   "traces",
		Short: "List traces in step order",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return imprint.Invalidf("--limit must not be negative")
			}
			if err := imprint.ValidateWorkspace("--workspace", workspace); err != nil {
				return err
			}
			f := imprint.TraceFilter{EpisodeID: episode, SessionID: session, Workspace: workspace, Limit: limit}
			if limit == 0 {
				f.Limit = imprint.NoLimit
			}
			var trs []imprint.Trace
			if c, err := a.remoteClient(cmd, server, token); err != nil {
				return err
			} else if c != nil {
				if trs, err = c.Traces(cmd.Context(), a.Scope(), f); err != nil {
					return err
				}
			} else {
				st, err := a.Store(cmd.Context())
				if err != nil {
					return err
				}
				if trs, err = st.ListTraces(cmd.Context(), a.Scope(), f); err != nil {
					return err
				}
			}
			return printList(a, trs, clitext.Traces)
		},
	}
	cmd.Flags().StringVar(&episode, "episode", "", "only traces of this episode")
	cmd.Flags().StringVar(&session, "session", "", "only traces of this session")
	cmd.Flags().StringVar(&workspace, "workspace", "", workspaceUsage)
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many traces (0 for all)")
	addServerFlags(cmd, &server, &token)
	return cmd
}
