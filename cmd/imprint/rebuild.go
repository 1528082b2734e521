package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/shard"
	"github.com/imprint-dev/imprint/sqlite"
)

// rebuildBackup is the name the database had before a rebuild is kept
// under, beside it (a purge purges it too, package sqlite).
const rebuildBackup = dbFileName + sqlite.RebuildBackupSuffix

func newRebuildCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rebuild",
		Short: "Recreate the database's messages and memories from the JSONL shards",
		Long: "rebuild recreates the messages, sessions and memories of the SQLite database from the\n" +
			"data dir's JSONL shards (conversations/ and records/): the live memories as they were,\n" +
			"forgotten ones forgotten, purged ones gone. Episodes, traces, API keys and jobs, which\n" +
			"the shards do not hold, are carried over from the current database when it opens.\n" +
			"The previous database is kept as " + rebuildBackup + ". Stop imprint serve first.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if config.IsPostgresURL(a.Config.Store) {
				return imprint.Invalidf("rebuild works on the SQLite store (config store is %s)", a.Config.Source("store"))
			}
			dir := a.Config.DataDir
			if url, err := ingest.RunningService(dir); err != nil {
				return err
			} else if url != "" {
				return fmt.Errorf("%w: imprint serve (%s) holds the data dir %s: stop it, then rebuild", imprint.ErrUnavailable, url, dir)
			}
			release, err := ingest.LockImport(ctx, dir, true, nil)
			if err != nil {
				return err
			}
			defer release()
			emb, err := a.Embedder()
			if err != nil {
				return err
			}
			path := filepath.Join(dir, dbFileName)
			tmp := path + ".rebuild"
			for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("rebuild: %w", err)
				}
			}
			carried := false
			if _, err := os.Stat(path); err == nil {
				old, err := sqlite.Open(ctx, path)
				if err == nil {
					err = old.CopyTo(ctx, tmp)
					old.Close()
				}
				if err != nil {
					fmt.Fprintf(a.Stderr, "imprint: warning: the current database could not be read (%v): rebuilding from the shards alone\n", err)
					_ = os.Remove(tmp)
				} else {
					carried = true
				}
			}
			db, err := sqlite.Open(ctx, tmp)
			if err != nil {
				return fmt.Errorf("rebuild: %w", err)
			}
			dropped, err := db.DropRecords(ctx)
			if err != nil {
				db.Close()
				return fmt.Errorf("rebuild: %w", err)
			}
			cursors := make([]curate.Cursor, len(dropped))
			for i, c := range dropped {
				cursors[i] = curate.Cursor{Scope: c.Scope, SessionID: c.SessionID, MessageID: c.MessageID}
			}
			stats, err := curate.Rebuild(ctx, curate.RebuildDeps{Store: db, Embedder: emb, Cursors: cursors,
				Conversations: shard.Dir(filepath.Join(dir, "conversations")), Records: shard.Dir(filepath.Join(dir, "records"))})
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("rebuild: %w", err)
			}
			if _, err := os.Stat(path); err == nil {
				if err := os.Rename(path, filepath.Join(dir, rebuildBackup)); err != nil {
					return fmt.Errorf("rebuild: keep the previous database: %w", err)
				}
				for _, ext := range []string{"-wal", "-shm"} {
					_ = os.Remove(path + ext)
				}
			}
			if err := os.Rename(tmp, path); err != nil {
				return fmt.Errorf("rebuild: %w", err)
			}
			if err := shard.SyncDir(dir); err != nil {
				return fmt.Errorf("rebuild: %w", err)
			}
			res := curate.RebuildResult{Rebuilt: stats, CarriedOver: carried, Backup: filepath.Join(dir, rebuildBackup)}
			return a.Print(res, res.WriteText)
		},
	}
	return cmd
}
