package postgres

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
)

const jobCols = `id, kind, tenant, user_id, agent, workspace, session_id, episode_id, state, attempts, max_attempts,
	last_error, unique_key, run_at, created_at, updated_at`

// unfinishedStates is the SQL list of states that hold a unique key, as in
// the jobs_unique index.
const unfinishedStates = `('available', 'running', 'retryable')`

func scanJob(row pgx.Row) (imprint.Job, error) {
	var j imprint.Job
	var kind, state string
	var runAt, created, updated time.Time
	err := row.Scan(&j.ID, &kind, &j.Scope.Tenant, &j.Scope.User, &j.Scope.Agent, new(string), &j.SessionID,
		&j.EpisodeID, &state, &j.Attempts, &j.MaxAttempts, &j.LastError, &j.UniqueKey, &runAt, &created, &updated)
	j.Kind, j.State = imprint.JobKind(kind), imprint.JobState(state)
	j.RunAt, j.CreatedAt, j.UpdatedAt = imprint.At(runAt), imprint.At(created), imprint.At(updated)
	return j, err
}

func collectJobs(rows pgx.Rows, err error) ([]imprint.Job, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []imprint.Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// insertJob enqueues j inside tx: it returns the unfinished job holding
// j.UniqueKey and false when there is one, else the inserted job and true.
// The unique index settles a race between two nodes: the loser inserts
// nothing and reads the winner's job.
func insertJob(ctx context.Context, tx pgx.Tx, j imprint.Job, now imprint.Time) (imprint.Job, bool, error) {
	if j.MaxAttempts <= 0 {
		j.MaxAttempts = imprint.DefaultJobMaxAttempts
	}
	if j.RunAt.IsZero() {
		j.RunAt = now
	}
	j.State, j.Attempts, j.LastError = imprint.JobAvailable, 0, ""
	j.CreatedAt, j.UpdatedAt = now, now
	err := tx.QueryRow(ctx, `INSERT INTO jobs (kind, tenant, user_id, agent, workspace, session_id, episode_id,
		state, attempts, max_attempts, last_error, unique_key, run_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, '', $10, $11, $12, $12)
		ON CONFLICT (unique_key) WHERE unique_key <> '' AND state IN `+unfinishedStates+` DO NOTHING RETURNING id`,
		string(j.Kind), j.Scope.Tenant, j.Scope.User, j.Scope.Agent, "", j.SessionID, j.EpisodeID,
		string(j.State), j.MaxAttempts, j.UniqueKey, j.RunAt.Time, now.Time).Scan(&j.ID)
	if err == nil {
		return j, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return j, false, err
	}
	old, err := scanJob(tx.QueryRow(ctx, `SELECT `+jobCols+` FROM jobs
		WHERE unique_key = $1 AND unique_key <> '' AND state IN `+unfinishedStates, j.UniqueKey))
	return old, false, err
}

// genericBegin begins a transaction whose statements are planned
// generically, in BEGIN's own round trip (a simple query of two
// statements).
const genericBegin = `BEGIN; SET LOCAL plan_cache_mode = force_generic_plan`

// writeTx runs fn in a transaction, as db.tx, whose prepared statements
// are planned generically (plan_cache_mode force_generic_plan): for the
// transactions of the live request path and of job inserts, whose
// statements look rows up by key and write them, so that their plan does
// not depend on the values. PostgreSQL's default plans a prepared
// statement afresh on each of its first five executions on a connection
// before it settles on the generic plan; River's insert, a large CTE over
// arrays, takes 2–4 ms to plan on this machine, and planning was about
// 40 % of the server's statement time in a 3-node run of fresh processes.
// Searches keep the default (their plans do depend on the values).
func (db *DB) writeTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{BeginQuery: genericBegin}, fn)
}

// EnqueueJob inserts j as available at j.RunAt (now when zero), with
// MaxAttempts imprint.DefaultJobMaxAttempts when not set. When j.UniqueKey
// is set and an unfinished job holds it, that job is returned with false
// and nothing is inserted. ErrInvalid for a missing kind or scope.
func (db *DB) EnqueueJob(ctx context.Context, j imprint.Job) (imprint.Job, bool, error) {
	if err := imprint.CheckJob(j); err != nil {
		return j, false, err
	}
	var out imprint.Job
	var inserted bool
	err := db.writeTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, inserted, err = db.enqueueTx(ctx, tx, j, imprint.Now())
		return err
	})
	if err != nil {
		return j, false, dbErr("enqueue job", err)
	}
	return out, inserted, nil
}

// ClaimJobs marks up to n ready jobs running (Attempts+1) in one
// transaction and returns them, oldest RunAt first. Rows another node is
// claiming are skipped (FOR UPDATE SKIP LOCKED), so two nodes never claim
// one job. An extract job is not claimed while another extract job of its
// session runs, and one claim never returns two extract jobs of the same
// session; claims of extract jobs of one session are serialized by a
// transaction-scoped advisory lock on the session.
func (db *DB) ClaimJobs(ctx context.Context, now time.Time, n int) ([]imprint.Job, error) {
	if n <= 0 {
		return []imprint.Job{}, nil
	}
	var out []imprint.Job
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out = []imprint.Job{}
		cand, err := collectJobs(tx.Query(ctx, `SELECT `+jobCols+` FROM jobs
			WHERE state IN ('available', 'retryable') AND run_at <= $1
			ORDER BY run_at, id LIMIT $2 FOR UPDATE SKIP LOCKED`, now, 4*n))
		if err != nil {
			return err
		}
		sessions := map[string]bool{}
		stamp := imprint.Now()
		for _, j := range cand {
			if len(out) == n {
				break
			}
			if j.Kind == imprint.JobExtract {
				key := sessionKey(j.Scope, j.SessionID)
				if sessions[key] {
					continue
				}
				sessions[key] = true
				var locked, busy bool
				if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`,
					imprint.ExtractJobKey(j.Scope, j.SessionID)).Scan(&locked); err != nil {
					return err
				}
				if !locked {
					continue
				}
				if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE tenant = $1 AND user_id = $2
					AND agent = $3 AND session_id = $4 AND kind = 'extract' AND state = 'running')`,
					j.Scope.Tenant, j.Scope.User, j.Scope.Agent, j.SessionID).Scan(&busy); err != nil {
					return err
				}
				if busy {
					continue
				}
			}
			if _, err := tx.Exec(ctx, `UPDATE jobs SET state = 'running', attempts = attempts + 1, updated_at = $1
				WHERE id = $2`, stamp.Time, j.ID); err != nil {
				return err
			}
			j.State, j.Attempts, j.UpdatedAt = imprint.JobRunning, j.Attempts+1, stamp
			out = append(out, j)
		}
		return nil
	})
	if err != nil {
		return nil, dbErr("claim jobs", err)
	}
	return out, nil
}

// finishJob runs an update of a running job (set uses $1.. for vals; the
// id follows): ErrNotFound when the job does not exist, ErrConflict when it
// is not running.
func (db *DB) finishJob(ctx context.Context, op string, id int64, set string, vals ...any) error {
	err := db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE jobs SET `+set+` WHERE id = $`+itoa(len(vals)+1)+` AND state = 'running'`,
			append(vals, id)...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() > 0 {
			return nil
		}
		var state string
		err = tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, id).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) {
			return imprint.NotFoundf("job %d not found", id)
		}
		if err != nil {
			return err
		}
		return imprint.Conflictf("job %d is %s, not running", id, state)
	})
	return dbErr(op, err)
}

// CompleteJob marks a running job completed. ErrNotFound for an unknown
// id, ErrConflict when the job is not running.
func (db *DB) CompleteJob(ctx context.Context, id int64) error {
	return db.finishJob(ctx, "complete job", id, `state = 'completed', updated_at = $1`, imprint.Now().Time)
}

// FailJob records errMsg on a running job and makes it retryable at
// retryAt, or failed when final.
func (db *DB) FailJob(ctx context.Context, id int64, errMsg string, retryAt time.Time, final bool) error {
	state, runAt := imprint.JobRetryable, imprint.At(retryAt)
	if final {
		state = imprint.JobFailed
	}
	if runAt.IsZero() {
		runAt = imprint.Now()
	}
	return db.finishJob(ctx, "fail job", id, `state = $1, last_error = $2, run_at = $3, updated_at = $4`,
		string(state), errMsg, runAt.Time, imprint.Now().Time)
}

// ReleaseJob hands a running job back: available again, its attempt not
// counted.
func (db *DB) ReleaseJob(ctx context.Context, id int64) error {
	return db.finishJob(ctx, "release job", id, `state = 'available', attempts = GREATEST(attempts - 1, 0), updated_at = $1`,
		imprint.Now().Time)
}

// SnoozeJob hands a running job back to run again at runAt, its attempt not
// counted.
func (db *DB) SnoozeJob(ctx context.Context, id int64, runAt time.Time) error {
	return db.finishJob(ctx, "snooze job", id, `state = 'available', attempts = GREATEST(attempts - 1, 0),
		run_at = $1, updated_at = $2`, imprint.At(runAt).Time, imprint.Now().Time)
}

// ResetRunningJobs makes every running job of the jobs table available
// again and returns how many there were. It is for one process that owns
// the table; nodes sharing a database run their jobs on River instead,
// whose rescuer hands back only the jobs of a node that stopped.
func (db *DB) ResetRunningJobs(ctx context.Context) (int, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE jobs SET state = 'available', updated_at = $1 WHERE state = 'running'`, imprint.Now().Time)
	if err != nil {
		return 0, dbErr("reset running jobs", err)
	}
	return int(tag.RowsAffected()), nil
}

// JobStats counts the available, running, retryable and failed jobs of the
// scope, or of all scopes when scope is nil (of the installed JobEngine
// when there is one).
func (db *DB) JobStats(ctx context.Context, scope *imprint.Scope) (imprint.JobStats, error) {
	var st imprint.JobStats
	if err := imprint.CheckScopeOrAll(scope); err != nil {
		return st, err
	}
	if e := db.engine(); e != nil {
		st, err := e.JobStats(ctx, scope)
		return st, dbErr("job stats", err)
	}
	var a args
	q := `SELECT state, COUNT(*) FROM jobs WHERE state IN ('available', 'running', 'retryable', 'failed')`
	if scope != nil {
		q += ` AND ` + a.scope("", *scope)
	}
	rows, err := db.pool.Query(ctx, q+` GROUP BY state`, a...)
	if err != nil {
		return st, dbErr("job stats", err)
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return st, dbErr("job stats", err)
		}
		st.Add(imprint.JobState(state), n)
	}
	return st, dbErr("job stats", rows.Err())
}

// ListJobs returns up to limit (100 when <= 0) jobs in state, newest first,
// of the scope or of all scopes when scope is nil (of the installed
// JobEngine when there is one). ErrInvalid for an unknown state.
func (db *DB) ListJobs(ctx context.Context, scope *imprint.Scope, state imprint.JobState, limit int) ([]imprint.Job, error) {
	if err := imprint.CheckJobState(state); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 100
	}
	if err := imprint.CheckScopeOrAll(scope); err != nil {
		return nil, err
	}
	if e := db.engine(); e != nil {
		out, err := e.ListJobs(ctx, scope, state, limit)
		return out, dbErr("list jobs", err)
	}
	var a args
	q := `SELECT ` + jobCols + ` FROM jobs WHERE state = ` + a.add(string(state))
	if scope != nil {
		q += ` AND ` + a.scope("", *scope)
	}
	out, err := collectJobs(db.pool.Query(ctx, q+` ORDER BY id DESC LIMIT `+a.add(limit), a...))
	return out, dbErr("list jobs", err)
}

// The store hands its jobs to an outside engine (River in imprint serve)
// that writes in its transactions (imprint.JobEngineHost).
var _ imprint.JobEngineHost[pgx.Tx] = (*DB)(nil)

// jobEngineRef boxes the installed engine for the atomic pointer.
type jobEngineRef struct{ e imprint.JobEngine[pgx.Tx] }

// engineSlot is the DB's installed job engine.
type engineSlot = atomic.Pointer[jobEngineRef]

// SupportsJobEngine implements imprint.JobEngineHost: always true.
func (db *DB) SupportsJobEngine() bool { return true }

// SetJobEngine makes EnqueueJob, CloseEpisode, SubmitEpisode, JobStats and
// ListJobs use e instead of the jobs table, for the rest of the DB's life:
// e's InsertTx runs inside the store's transaction, so those stay atomic
// with the rows they write. Call it before the store is shared. ErrInvalid
// for a nil engine.
func (db *DB) SetJobEngine(e imprint.JobEngine[pgx.Tx]) error {
	if e == nil {
		return imprint.Invalidf("job engine is nil")
	}
	db.jobEngine.Store(&jobEngineRef{e: e})
	return nil
}

// engine returns the installed job engine, nil for the jobs table.
func (db *DB) engine() imprint.JobEngine[pgx.Tx] {
	if r := db.jobEngine.Load(); r != nil {
		return r.e
	}
	return nil
}

// enqueueTx enqueues j inside tx through the installed engine, else into
// the jobs table.
func (db *DB) enqueueTx(ctx context.Context, tx pgx.Tx, j imprint.Job, now imprint.Time) (imprint.Job, bool, error) {
	if err := imprint.CheckJob(j); err != nil {
		return j, false, err
	}
	if e := db.engine(); e != nil {
		return e.InsertTx(ctx, tx, j)
	}
	return insertJob(ctx, tx, j, now)
}

// HandOverTableJobs implements imprint.JobEngineHost: it moves the
// unfinished jobs of the jobs table into the installed job engine, in one
// transaction, and returns how many it moved; their attempts start again.
// Without an engine it does nothing.
func (db *DB) HandOverTableJobs(ctx context.Context) (int, error) {
	e := db.engine()
	if e == nil {
		return 0, nil
	}
	n := 0
	err := db.tx(ctx, func(tx pgx.Tx) error {
		jobs, err := collectJobs(tx.Query(ctx, `SELECT `+jobCols+` FROM jobs WHERE state IN `+unfinishedStates+` ORDER BY id FOR UPDATE`))
		if err != nil {
			return err
		}
		for _, j := range jobs {
			j.ID, j.Attempts, j.LastError, j.State = 0, 0, "", imprint.JobAvailable
			if _, _, err := e.InsertTx(ctx, tx, j); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM jobs WHERE state IN `+unfinishedStates); err != nil {
			return err
		}
		n = len(jobs)
		return nil
	})
	return n, dbErr("hand over table jobs", err)
}
