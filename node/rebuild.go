package node

import (
	"context"
	"path/filepath"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/shard"
	"github.com/imprint-dev/imprint/sqlite"
)

// RebuildBackup is the name the database had before a rebuild is kept
// under, beside it (a purge purges it too, package sqlite).
const RebuildBackup = DBFileName + sqlite.RebuildBackupSuffix

// Rebuild recreates the messages, sessions and memories of the data dir's
// SQLite database from its JSONL shards (sqlite.RebuildFile filled by
// curate.Rebuild), keeping the previous file as RebuildBackup. carryFailed
// is told when the current database could not be read: the rebuild then
// starts from the shards alone. ErrInvalid on a PostgreSQL store;
// ErrUnavailable while imprint serve or an import holds the data dir.
func (n *Node) Rebuild(ctx context.Context, carryFailed func(error)) (curate.RebuildResult, error) {
	var res curate.RebuildResult
	if config.IsPostgresURL(n.Config.Store) {
		return res, imprint.Invalidf("rebuild works on the SQLite store (config store is %s)", n.Config.Source("store"))
	}
	dir := n.Config.DataDir
	release, err := ingest.LockForRebuild(ctx, dir)
	if err != nil {
		return res, err
	}
	defer release()
	emb, err := n.Embedder()
	if err != nil {
		return res, err
	}
	file, err := sqlite.RebuildFile(ctx, filepath.Join(dir, DBFileName), func(ctx context.Context, db *sqlite.DB, cursors []imprint.SessionCursor) error {
		var err error
		res.Rebuilt, err = curate.Rebuild(ctx, curate.RebuildDeps{Store: db, Embedder: emb, Cursors: cursors,
			Conversations: shard.Dir(filepath.Join(dir, "conversations")), Records: shard.Dir(filepath.Join(dir, "records"))})
		return err
	})
	if file.CarryError != nil && carryFailed != nil {
		carryFailed(file.CarryError)
	}
	if err != nil {
		return res, err
	}
	res.CarriedOver, res.Backup = file.CarriedOver, file.Backup
	return res, nil
}
