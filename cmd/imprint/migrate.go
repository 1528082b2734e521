package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/postgres"
	"github.com/imprint-dev/imprint/schedule"
	"github.com/imprint-dev/imprint/sqlite"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// This file is imprint migrate: the data dir's SQLite store copied into a
// PostgreSQL database (curate.Migrate).

func newMigrateCmd(a *App) *cobra.Command {
	var to string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "migrate --to postgres://… [--dry-run]",
		Short: "Copy the SQLite store (every record, version, vector and unfinished job) into an empty PostgreSQL database",
		Long: "migrate copies the data dir's SQLite store into the PostgreSQL database of --to with the\n" +
			"same ids: messages with their vectors, sessions with their extraction state, every\n" +
			"memory version, episodes with their turns and traces, API keys and the unfinished jobs\n" +
			"(which the first `imprint serve` on the database hands to River). The database must be\n" +
			"empty, or hold a migration of the same store that was cut off: running the command\n" +
			"again resumes it. --dry-run counts what would be copied.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.migrate(cmd.Context(), to, dryRun)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the PostgreSQL database to fill (a postgres:// URL)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "count what would be copied; write nothing")
	return cmd
}

func (a *App) migrate(ctx context.Context, to string, dryRun bool) error {
	if !config.IsPostgresURL(to) {
		return imprint.Invalidf("migrate: --to %q: want a postgres:// URL", config.MaskURL(to))
	}
	if config.IsPostgresURL(a.Config.Store) {
		return imprint.Invalidf("migrate: the configured store (%s) is PostgreSQL already; migrate copies a data dir's SQLite store", a.Config.Source("store"))
	}
	path, err := filepath.Abs(filepath.Join(a.Config.DataDir, dbFileName))
	if err != nil {
		return imprint.Invalidf("migrate: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		return imprint.Invalidf("migrate: no SQLite store to copy at %s (data_dir from %s)", path, a.Config.Source("data_dir"))
	}
	src, err := sqlite.Open(ctx, path)
	if err != nil {
		return fmt.Errorf("migrate: open %s: %w", path, err)
	}
	defer src.Close()
	if a.Config.Jobs.Engine == config.JobsEngineRiver {
		// The source's jobs are River's: list them through River, as
		// imprint serve would run them.
		eng, err := schedule.NewRiver(ctx, riversqlite.New(src.WriterDB()), src, schedule.RiverConfig{}, a.Logger)
		if err != nil {
			return fmt.Errorf("migrate: source jobs: %w", err)
		}
		if _, err := installEngine(ctx, imprint.JobEngineHost[*sql.Tx](src), eng, a); err != nil {
			return fmt.Errorf("migrate: source jobs: %w", err)
		}
	}
	dst, err := postgres.Open(ctx, to)
	if err != nil {
		return fmt.Errorf("migrate: open %s: %w", config.MaskURL(to), err)
	}
	defer dst.Close()
	last := time.Time{}
	st, err := curate.Migrate(ctx, src, dst, curate.MigrateOptions{Source: "sqlite:" + path, DryRun: dryRun,
		Progress: func(p curate.MigrateProgress) {
			if now := time.Now(); now.Sub(last) >= time.Second || p.Done >= p.Total {
				last = now
				fmt.Fprintf(a.Stderr, "imprint: migrate %s %d/%d\n", p.Kind, p.Done, p.Total)
			}
		}})
	if err != nil {
		return err
	}
	return a.Print(st, st.WriteText)
}
