package node

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/postgres"
	"github.com/imprint-dev/imprint/schedule"
	"github.com/imprint-dev/imprint/sqlite"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// Migrate copies the data dir's SQLite store into the PostgreSQL database
// at to (curate.Migrate): the source is named by its file's absolute path
// in the target's mark, and its jobs are read through River when
// jobs.engine is river, as imprint serve would run them (River's tables
// are made in the file when missing, and the jobs table's unfinished jobs
// moved into River, as serve does at start). progress gets each page.
// ErrInvalid for a to that is no postgres:// URL (or is malformed), a
// configured store that is PostgreSQL, or a data dir without a SQLite
// store; ErrConflict for a target holding other records.
func (n *Node) Migrate(ctx context.Context, to string, dryRun bool, progress func(curate.MigrateProgress)) (curate.MigrateStats, error) {
	var st curate.MigrateStats
	if !config.IsPostgresURL(to) {
		return st, imprint.Invalidf("migrate: --to %q: want a postgres:// URL", config.MaskURL(to))
	}
	if config.IsPostgresURL(n.Config.Store) {
		return st, imprint.Invalidf("migrate: the configured store (%s) is PostgreSQL already; migrate copies a data dir's SQLite store", n.Config.Source("store"))
	}
	path, err := filepath.Abs(filepath.Join(n.Config.DataDir, DBFileName))
	if err != nil {
		return st, imprint.Invalidf("migrate: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		return st, imprint.Invalidf("migrate: no SQLite store to copy at %s (data_dir from %s)", path, n.Config.Source("data_dir"))
	}
	src, err := sqlite.Open(ctx, path)
	if err != nil {
		return st, fmt.Errorf("migrate: open %s: %w", path, err)
	}
	defer src.Close()
	if n.Config.Jobs.Engine == config.JobsEngineRiver {
		eng, err := schedule.NewRiver(ctx, riversqlite.New(src.WriterDB()), src, schedule.RiverConfig{}, n.Logger)
		if err != nil {
			return st, fmt.Errorf("migrate: source jobs: %w", err)
		}
		if _, err := installEngine(ctx, imprint.JobEngineHost[*sql.Tx](src), eng, n.Logger); err != nil {
			return st, fmt.Errorf("migrate: source jobs: %w", err)
		}
	}
	dst, err := postgres.Open(ctx, to)
	if err != nil {
		return st, fmt.Errorf("migrate: open %s: %w", config.MaskURL(to), err)
	}
	defer dst.Close()
	return curate.Migrate(ctx, src, dst, curate.MigrateOptions{Source: "sqlite:" + path, DryRun: dryRun, Progress: progress})
}
