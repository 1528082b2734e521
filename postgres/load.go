package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
)

// The store takes a copy of another (imprint migrate).
var _ imprint.Loader = (*DB)(nil)

// SupportsLoad implements imprint.Loader: always true.
func (db *DB) SupportsLoad() bool { return true }

// loadSessionSQL writes a session's row as given, its cursor on the
// sequence number of a message id ($6) and its newest message found anew.
const loadSessionSQL = `INSERT INTO sessions (tenant, user_id, agent, workspace, id, cursor_seq, last_scene_name,
	rounds_since_extraction, extraction_due, last_extracted_at, created_at, updated_at, between_people, last_seq, last_message_at)
	VALUES ($1, $2, $3, $4, $5,
		COALESCE((SELECT seq FROM messages WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND session_id = $5 AND id = $6), 0),
		$7, $8, $9, $10, $11, $12, $13,
		COALESCE((SELECT MAX(seq) FROM messages WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND session_id = $5), 0),
		(SELECT recorded_at FROM messages WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND session_id = $5
			ORDER BY seq DESC LIMIT 1))
	ON CONFLICT (tenant, user_id, agent, id) DO UPDATE SET workspace = excluded.workspace, cursor_seq = excluded.cursor_seq,
		last_scene_name = excluded.last_scene_name, rounds_since_extraction = excluded.rounds_since_extraction,
		extraction_due = excluded.extraction_due, last_extracted_at = excluded.last_extracted_at,
		created_at = excluded.created_at, updated_at = excluded.updated_at, between_people = excluded.between_people,
		last_seq = excluded.last_seq, last_message_at = excluded.last_message_at`

// LoadSessions implements imprint.Loader, in one transaction.
func (db *DB) LoadSessions(ctx context.Context, sessions []imprint.SessionState) error {
	if err := imprint.CheckLoadSessions(sessions); err != nil {
		return err
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		for _, s := range sessions {
			if _, err := tx.Exec(ctx, loadSessionSQL, s.Scope.Tenant, s.Scope.User, s.Scope.Agent, s.Workspace, s.ID,
				s.CursorMessageID, s.LastSceneName, s.RoundsSinceExtraction, s.ExtractionDue, tsArg(s.LastExtractedAt),
				s.CreatedAt.Time, s.UpdatedAt.Time, s.BetweenPeople); err != nil {
				return fmt.Errorf("session %s: %w", s.ID, err)
			}
		}
		return nil
	})
	return dbErr("load sessions", err)
}

// loadJobSQL inserts a job as it stands unless an equal one is in the
// table, or (for an unfinished one) an unfinished job holds its unique key.
const loadJobSQL = `INSERT INTO jobs (kind, tenant, user_id, agent, workspace, session_id, episode_id,
	state, attempts, max_attempts, last_error, unique_key, run_at, created_at, updated_at)
	SELECT $1, $2, $3, $4, '', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14
	WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE kind = $1 AND tenant = $2 AND user_id = $3 AND agent = $4
		AND session_id = $5 AND episode_id = $6 AND unique_key = $11 AND created_at = $13)
	AND NOT ($11 <> '' AND $7 IN ` + unfinishedStates + ` AND EXISTS (SELECT 1 FROM jobs
		WHERE unique_key = $11 AND state IN ` + unfinishedStates + `))`

// LoadJobs implements imprint.Loader, in one transaction.
func (db *DB) LoadJobs(ctx context.Context, jobs []imprint.Job) (int, error) {
	if err := imprint.CheckLoadJobs(jobs); err != nil {
		return 0, err
	}
	n := 0
	err := db.tx(ctx, func(tx pgx.Tx) error {
		n = 0
		for _, j := range imprint.JobsToLoad(jobs) {
			tag, err := tx.Exec(ctx, loadJobSQL, string(j.Kind), j.Scope.Tenant, j.Scope.User, j.Scope.Agent,
				j.SessionID, j.EpisodeID, string(j.State), j.Attempts, j.MaxAttempts, j.LastError, j.UniqueKey,
				j.RunAt.Time, j.CreatedAt.Time, j.UpdatedAt.Time)
			if err != nil {
				return err
			}
			n += int(tag.RowsAffected())
		}
		return nil
	})
	return n, dbErr("load jobs", err)
}

// LoadLLMCalls implements imprint.Loader.
func (db *DB) LoadLLMCalls(ctx context.Context, calls []imprint.LLMCall, mark imprint.LoadMark) error {
	raw, err := json.Marshal(mark)
	if err != nil {
		return fmt.Errorf("load llm calls: %w", err)
	}
	err = db.tx(ctx, func(tx pgx.Tx) error {
		for _, c := range calls {
			if _, err := tx.Exec(ctx, `INSERT INTO llm_calls (op, provider, model, prompt_tokens, completion_tokens,
				estimated, latency_ms, outcome, attempt, at, tenant, user_id, agent)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
				c.Op, c.Provider, c.Model, c.PromptTokens, c.CompletionTokens, c.TokensEstimated,
				c.Latency.Milliseconds(), c.Outcome, c.Attempt, c.At.Time, c.Scope.Tenant, c.Scope.User, c.Scope.Agent); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, setMarkSQL, string(raw))
		return err
	})
	return dbErr("load llm calls", err)
}

// setMarkSQL replaces the copy mark.
const setMarkSQL = `INSERT INTO load_mark (id, mark) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET mark = excluded.mark`

// LoadMark implements imprint.Loader.
func (db *DB) LoadMark(ctx context.Context) (imprint.LoadMark, error) {
	var m imprint.LoadMark
	var raw string
	err := db.pool.QueryRow(ctx, `SELECT mark FROM load_mark WHERE id = 1`).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, nil
	}
	if err == nil {
		err = json.Unmarshal([]byte(raw), &m)
	}
	return m, dbErr("load mark", err)
}

// SetLoadMark implements imprint.Loader.
func (db *DB) SetLoadMark(ctx context.Context, m imprint.LoadMark) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("set load mark: %w", err)
	}
	_, err = db.pool.Exec(ctx, setMarkSQL, string(raw))
	return dbErr("set load mark", err)
}
