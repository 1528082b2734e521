package sqlite

import (
	"context"
	"database/sql"

	imprint "github.com/imprint-dev/imprint"
)

// The store hands its jobs to an outside engine (River in imprint serve)
// that writes in its transactions (imprint.JobEngineHost).
var _ imprint.JobEngineHost[*sql.Tx] = (*DB)(nil)

// jobEngineRef boxes the installed engine for the atomic pointer.
type jobEngineRef struct{ e imprint.JobEngine[*sql.Tx] }

// SupportsJobEngine implements imprint.JobEngineHost: always true.
func (db *DB) SupportsJobEngine() bool { return true }

// SetJobEngine makes EnqueueJob, CloseEpisode, SubmitEpisode, JobStats and
// ListJobs use e instead of the jobs table, for the rest of the DB's life:
// e's InsertTx runs inside the store's write transaction (a transaction of
// WriterDB), so those stay atomic with the rows they write. Call it before
// the store is shared. The table's own methods (ClaimJobs, CompleteJob, …)
// keep working on the table, which then holds no new jobs. ErrInvalid for
// a nil engine.
func (db *DB) SetJobEngine(e imprint.JobEngine[*sql.Tx]) error {
	if e == nil {
		return imprint.Invalidf("job engine is nil")
	}
	db.jobEngine.Store(&jobEngineRef{e: e})
	return nil
}

// engine returns the installed job engine, nil for the jobs table.
func (db *DB) engine() imprint.JobEngine[*sql.Tx] {
	if r := db.jobEngine.Load(); r != nil {
		return r.e
	}
	return nil
}

// WriterDB returns the store's writer pool: one connection, every
// transaction BEGIN IMMEDIATE. A job engine that must write in the store's
// transactions uses it, so that its writes queue on the same connection
// instead of waiting on SQLITE_BUSY. Do not close it; Close does.
func (db *DB) WriterDB() *sql.DB { return db.w }

// enqueueTx enqueues j inside tx through the installed engine, else into
// the jobs table.
func (db *DB) enqueueTx(ctx context.Context, tx *sql.Tx, j imprint.Job, now imprint.Time) (imprint.Job, bool, error) {
	if err := imprint.CheckJob(j); err != nil {
		return j, false, err
	}
	if e := db.engine(); e != nil {
		return e.InsertTx(ctx, tx, j)
	}
	return insertJob(ctx, tx, j, now)
}

// HandOverTableJobs implements imprint.JobEngineHost: it moves the
// unfinished jobs of the jobs table (left by a run with the table engine)
// into the installed job engine, in one transaction, and returns how many
// it moved; their attempts start again. Without an engine it does nothing.
func (db *DB) HandOverTableJobs(ctx context.Context) (int, error) {
	e := db.engine()
	if e == nil {
		return 0, nil
	}
	n := 0
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		rows, err := tx.QueryContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE state IN `+unfinishedStates+` ORDER BY id`)
		if err != nil {
			return nil, err
		}
		var jobs []imprint.Job
		for rows.Next() {
			j, err := scanJob(rows)
			if err != nil {
				rows.Close()
				return nil, err
			}
			jobs = append(jobs, j)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for _, j := range jobs {
			j.ID, j.Attempts, j.LastError, j.State = 0, 0, "", imprint.JobAvailable
			if _, _, err := e.InsertTx(ctx, tx, j); err != nil {
				return nil, err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM jobs WHERE state IN `+unfinishedStates); err != nil {
			return nil, err
		}
		n = len(jobs)
		return nil, nil
	})
	return n, dbErr("hand over table jobs", err)
}
