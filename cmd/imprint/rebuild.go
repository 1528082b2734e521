package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/node"
)

func newRebuildCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild",
		Short: "Recreate the database's messages and memories from the JSONL shards",
		Long: "rebuild recreates the messages, sessions and memories of the SQLite database from the\n" +
			"data dir's JSONL shards (conversations/ and records/): the live memories as they were,\n" +
			"forgotten ones forgotten, purged ones gone. Episodes, traces, API keys and jobs, which\n" +
			"the shards do not hold, are carried over from the current database when it opens.\n" +
			"The previous database is kept as " + node.RebuildBackup + ". Stop imprint serve first.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := a.node.Rebuild(cmd.Context(), func(err error) {
				fmt.Fprintf(a.Stderr, "imprint: warning: the current database could not be read (%v): rebuilding from the shards alone\n", err)
			})
			if err != nil {
				return err
			}
			return a.Print(res, res.WriteText)
		},
	}
}
