package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/curate"
)

func newMigrateCmd(a *App) *cobra.Command {
	var to string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "migrate --to postgres://… [--dry-run]",
		Short: "Copy the SQLite store (every record, version, vector and unfinished job) into an empty PostgreSQL database",
		Long: "migrate copies the data dir's SQLite store into the PostgreSQL database of --to with the\n" +
			"same ids: messages with their vectors, sessions with their extraction state, every\n" +
			"memory version, episodes with their turns and traces, the LLM call log, API keys and the\n" +
			"unfinished jobs (which the first `imprint serve` on the database hands to River). The\n" +
			"database must be empty, or hold a migration of the same store that was cut off: running\n" +
			"the command again resumes it. --dry-run counts what would be copied.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer a.batchGC()()
			last := time.Time{}
			st, err := a.node.Migrate(cmd.Context(), to, dryRun, func(p curate.MigrateProgress) {
				if now := time.Now(); now.Sub(last) >= time.Second || p.Done >= p.Total {
					last = now
					fmt.Fprintf(a.Stderr, "imprint: migrate %s %d/%d\n", p.Kind, p.Done, p.Total)
				}
			})
			if err != nil {
				return err
			}
			return a.Print(st, st.WriteText)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the PostgreSQL database to fill (a postgres:// URL)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "count what would be copied; write nothing")
	return cmd
}
