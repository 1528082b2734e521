package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

var _ imprint.ServiceStore = (*DB)(nil)

const jobCols = `id, kind, tenant, user_id, agent, workspace, session_id, episode_id, state, attempts, max_attempts,
	last_error, unique_key, run_at, created_at, updated_at`

// unfinishedStates is the SQL list of states that hold a unique key; it must
// read exactly as in the jobs_unique index so the planner can use it.
const unfinishedStates = `('available', 'running', 'retryable')`

func scanJob(row interface{ Scan(...any) error }) (imprint.Job, error) {
	var j imprint.Job
	var kind, state, runAt, created, updated string
	err := row.Scan(&j.ID, &kind, &j.Scope.Tenant, &j.Scope.User, &j.Scope.Agent, new(string), &j.SessionID,
		&j.EpisodeID, &state, &j.Attempts, &j.MaxAttempts, &j.LastError, &j.UniqueKey, &runAt, &created, &updated)
	j.Kind, j.State = imprint.JobKind(kind), imprint.JobState(state)
	j.RunAt, j.CreatedAt, j.UpdatedAt = parseTS(runAt), parseTS(created), parseTS(updated)
	return j, err
}

// insertJob enqueues j inside tx: it returns the unfinished job holding
// j.UniqueKey and false when there is one, else the inserted job and true.
func insertJob(ctx context.Context, tx *sql.Tx, j imprint.Job, now imprint.Time) (imprint.Job, bool, error) {
	if err := imprint.CheckJob(j); err != nil {
		return j, false, err
	}
	if j.UniqueKey != "" {
		old, err := scanJob(tx.QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs
			WHERE unique_key = ? AND unique_key <> '' AND state IN `+unfinishedStates, j.UniqueKey))
		if err == nil {
			return old, false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return j, false, err
		}
	}
	if j.MaxAttempts <= 0 {
		j.MaxAttempts = imprint.DefaultJobMaxAttempts
	}
	if j.RunAt.IsZero() {
		j.RunAt = now
	}
	j.State, j.Attempts, j.LastError = imprint.JobAvailable, 0, ""
	j.CreatedAt, j.UpdatedAt = now, now
	err := tx.QueryRowContext(ctx, `INSERT INTO jobs (kind, tenant, user_id, agent, workspace, session_id, episode_id,
		state, attempts, max_attempts, last_error, unique_key, run_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, '', ?, ?, ?, ?) RETURNING id`,
		string(j.Kind), j.Scope.Tenant, j.Scope.User, j.Scope.Agent, "", j.SessionID, j.EpisodeID,
		string(j.State), j.MaxAttempts, j.UniqueKey, ts(j.RunAt), ts(now), ts(now)).Scan(&j.ID)
	if err != nil {
		return j, false, err
	}
	return j, true, nil
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
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		var err error
		out, inserted, err = db.enqueueTx(ctx, tx, j, imprint.Now())
		return nil, err
	})
	if err != nil {
		return j, false, dbErr("enqueue job", err)
	}
	return out, inserted, nil
}

// readyQuery selects claimable jobs oldest run_at first, leaving out extract
// jobs whose session already has a running extract job. It names the
// partial index of ready jobs: the planner would otherwise walk every ready
// job by state, including those scheduled far ahead.
const readyQuery = `SELECT ` + jobCols + ` FROM jobs j INDEXED BY jobs_ready
	WHERE state IN ('available', 'retryable') AND run_at <= ?
	  AND (kind <> 'extract' OR NOT EXISTS (SELECT 1 FROM jobs r
	       WHERE r.tenant = j.tenant AND r.user_id = j.user_id AND r.agent = j.agent
	         AND r.session_id = j.session_id AND r.kind = 'extract' AND r.state = 'running'))
	ORDER BY run_at, id LIMIT ?`

// ClaimJobs marks up to n ready jobs running (Attempts+1) in one write
// transaction and returns them, oldest RunAt first. An extract job is not
// claimed while another extract job of its session runs, and one claim never
// returns two extract jobs of the same session.
func (db *DB) ClaimJobs(ctx context.Context, now time.Time, n int) ([]imprint.Job, error) {
	if n <= 0 {
		return []imprint.Job{}, nil
	}
	at := ts(imprint.At(now))
	// Polling is frequent and mostly finds nothing: look first on the read
	// pool so an idle queue never takes the write lock.
	var ready int
	err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_ready
		WHERE state IN ('available', 'retryable') AND run_at <= ?)`, at).Scan(&ready)
	if err != nil {
		return nil, dbErr("claim jobs", err)
	}
	if ready == 0 {
		return []imprint.Job{}, nil
	}
	var out []imprint.Job
	err = db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		out = []imprint.Job{}
		// Extra rows leave room for extract jobs skipped below.
		rows, err := tx.QueryContext(ctx, readyQuery, at, 4*n)
		if err != nil {
			return nil, err
		}
		var cand []imprint.Job
		for rows.Next() {
			j, err := scanJob(rows)
			if err != nil {
				rows.Close()
				return nil, err
			}
			cand = append(cand, j)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		sessions := map[string]bool{}
		stamp := ts(imprint.Now())
		for _, j := range cand {
			if len(out) == n {
				break
			}
			if j.Kind == imprint.JobExtract {
				key := j.Scope.String() + "\x00" + j.SessionID
				if sessions[key] {
					continue
				}
				sessions[key] = true
			}
			if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'running', attempts = attempts + 1, updated_at = ?
				WHERE id = ?`, stamp, j.ID); err != nil {
				return nil, err
			}
			j.State, j.Attempts, j.UpdatedAt = imprint.JobRunning, j.Attempts+1, parseTS(stamp)
			out = append(out, j)
		}
		return nil, nil
	})
	if err != nil {
		return nil, dbErr("claim jobs", err)
	}
	return out, nil
}

// finishJob runs update (whose last placeholder is the job id) on a running
// job: ErrNotFound when the job does not exist, ErrConflict when it is not
// running.
func (db *DB) finishJob(ctx context.Context, op string, id int64, update string, args ...any) error {
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		r, err := tx.ExecContext(ctx, update+` WHERE id = ? AND state = 'running'`, append(args, id)...)
		if err != nil {
			return nil, err
		}
		if k, _ := r.RowsAffected(); k > 0 {
			return nil, nil
		}
		var state string
		err = tx.QueryRowContext(ctx, `SELECT state FROM jobs WHERE id = ?`, id).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, imprint.NotFoundf("job %d not found", id)
		}
		if err != nil {
			return nil, err
		}
		return nil, imprint.Conflictf("job %d is %s, not running", id, state)
	})
	return dbErr(op, err)
}

// CompleteJob marks a running job completed. ErrNotFound for an unknown
// id, ErrConflict when the job is not running.
func (db *DB) CompleteJob(ctx context.Context, id int64) error {
	return db.finishJob(ctx, "complete job", id, `UPDATE jobs SET state = 'completed', updated_at = ?`, ts(imprint.Now()))
}

// FailJob records errMsg on a running job and makes it retryable at
// retryAt, or failed when final. ErrNotFound for an unknown id, ErrConflict
// when the job is not running.
func (db *DB) FailJob(ctx context.Context, id int64, errMsg string, retryAt time.Time, final bool) error {
	state, runAt := imprint.JobRetryable, imprint.At(retryAt)
	if final {
		state = imprint.JobFailed
	}
	if runAt.IsZero() {
		runAt = imprint.Now()
	}
	return db.finishJob(ctx, "fail job", id, `UPDATE jobs SET state = ?, last_error = ?, run_at = ?, updated_at = ?`,
		string(state), errMsg, ts(runAt), ts(imprint.Now()))
}

// ReleaseJob hands a running job back: available again, its attempt not
// counted. ErrNotFound for an unknown id, ErrConflict when it is not running.
func (db *DB) ReleaseJob(ctx context.Context, id int64) error {
	return db.finishJob(ctx, "release job", id, `UPDATE jobs SET state = 'available', attempts = MAX(attempts - 1, 0),
		updated_at = ?`, ts(imprint.Now()))
}

// SnoozeJob hands a running job back to run again at runAt, its attempt not
// counted: for work that waits (an LLM budget), not work that failed.
// ErrNotFound for an unknown id, ErrConflict when it is not running.
func (db *DB) SnoozeJob(ctx context.Context, id int64, runAt time.Time) error {
	return db.finishJob(ctx, "snooze job", id, `UPDATE jobs SET state = 'available', attempts = MAX(attempts - 1, 0),
		run_at = ?, updated_at = ?`, ts(imprint.At(runAt)), ts(imprint.Now()))
}

// ResetRunningJobs makes every running job available again and returns how
// many there were. The attempts they made stay counted, so a job that
// crashes the process each time still ends as failed.
func (db *DB) ResetRunningJobs(ctx context.Context) (int, error) {
	var n int64
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		r, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'available', updated_at = ? WHERE state = 'running'`, ts(imprint.Now()))
		if err != nil {
			return nil, err
		}
		n, _ = r.RowsAffected()
		return nil, nil
	})
	return int(n), dbErr("reset running jobs", err)
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
	q := `SELECT state, COUNT(*) FROM jobs WHERE state IN ('available', 'running', 'retryable', 'failed')`
	var args []any
	if scope != nil {
		q += ` AND ` + scopeWhere("")
		args = scopeArgs(*scope)
	}
	rows, err := db.r.QueryContext(ctx, q+` GROUP BY state`, args...)
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
	q := `SELECT ` + jobCols + ` FROM jobs WHERE state = ?`
	args := []any{string(state)}
	if scope != nil {
		q += ` AND ` + scopeWhere("")
		args = append(args, scopeArgs(*scope)...)
	}
	rows, err := db.r.QueryContext(ctx, q+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, dbErr("list jobs", err)
	}
	defer rows.Close()
	out := []imprint.Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, dbErr("list jobs", err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("list jobs", err)
	}
	return out, nil
}
