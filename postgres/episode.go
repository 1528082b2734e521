package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/keyword"
)

const episodeCols = `id, tenant, user_id, agent, workspace, session_id, status, closed_by, meta, turns, trace_ids,
	started_at, ended_at, created_at, updated_at`

func scanEpisode(row pgx.Row) (imprint.Episode, error) {
	var e imprint.Episode
	var meta, turns, traceIDs string
	var started, ended *time.Time
	var created, updated time.Time
	if err := row.Scan(&e.ID, &e.Scope.Tenant, &e.Scope.User, &e.Scope.Agent, &e.Workspace, &e.SessionID,
		&e.Status, &e.ClosedBy, &meta, &turns, &traceIDs, &started, &ended, &created, &updated); err != nil {
		return e, err
	}
	if err := json.Unmarshal([]byte(meta), &e.Meta); err != nil {
		return e, fmt.Errorf("episode %s meta: %w", e.ID, err)
	}
	if err := json.Unmarshal([]byte(turns), &e.Turns); err != nil {
		return e, fmt.Errorf("episode %s turns: %w", e.ID, err)
	}
	if err := json.Unmarshal([]byte(traceIDs), &e.TraceIDs); err != nil {
		return e, fmt.Errorf("episode %s trace ids: %w", e.ID, err)
	}
	if e.Turns == nil {
		e.Turns = []imprint.Turn{}
	}
	if e.TraceIDs == nil {
		e.TraceIDs = []string{}
	}
	e.StartedAt, e.EndedAt, e.CreatedAt, e.UpdatedAt = tsOf(started), tsOf(ended), imprint.At(created), imprint.At(updated)
	return e, nil
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// episodeInsertSQL inserts an episode (the values of episodeRow), nothing
// when its id is stored.
const episodeInsertSQL = `INSERT INTO episodes (` + episodeCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		ON CONFLICT (id) DO NOTHING`

// episodeValues are an episode's columns: vals those of episodeInsertSQL,
// and the JSON and times among them.
type episodeValues struct {
	vals             []any
	meta, turns, ids string
	created, updated imprint.Time
}

// episodeRow encodes ep's columns (a zero creation or update time is now).
func episodeRow(ep imprint.Episode) (episodeValues, error) {
	var v episodeValues
	var err error
	if v.meta, err = jsonText(ep.Meta); err != nil {
		return v, err
	}
	turns := ep.Turns
	if turns == nil {
		turns = []imprint.Turn{}
	}
	if v.turns, err = jsonText(turns); err != nil {
		return v, err
	}
	ids := ep.TraceIDs
	if ids == nil {
		ids = []string{}
	}
	if v.ids, err = jsonText(ids); err != nil {
		return v, err
	}
	now := imprint.Now()
	v.created, v.updated = ep.CreatedAt, ep.UpdatedAt
	if v.created.IsZero() {
		v.created = now
	}
	if v.updated.IsZero() {
		v.updated = now
	}
	v.vals = []any{ep.ID, ep.Scope.Tenant, ep.Scope.User, ep.Scope.Agent, ep.Workspace, ep.SessionID, string(ep.Status),
		string(ep.ClosedBy), v.meta, v.turns, v.ids, tsArg(ep.StartedAt), tsArg(ep.EndedAt), v.created.Time, v.updated.Time}
	return v, nil
}

// upsertEpisode writes ep; setTraceIDs says whether an existing row's trace
// ids are replaced. It returns whether the episode is new, and ErrConflict
// when the id belongs to another scope. The row is locked for the rest of
// the transaction.
func upsertEpisode(ctx context.Context, tx pgx.Tx, ep imprint.Episode, setTraceIDs bool) (bool, error) {
	row, err := episodeRow(ep)
	if err != nil {
		return false, err
	}
	// Insert, or lock the existing row to compare its scope.
	tag, err := tx.Exec(ctx, episodeInsertSQL, row.vals...)
	if err != nil {
		return false, err
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	var owner imprint.Scope
	if err := tx.QueryRow(ctx, `SELECT tenant, user_id, agent FROM episodes WHERE id = $1 FOR UPDATE`, ep.ID).
		Scan(&owner.Tenant, &owner.User, &owner.Agent); err != nil {
		return false, err
	}
	if owner.Tenant != ep.Scope.Tenant || owner.User != ep.Scope.User || owner.Agent != ep.Scope.Agent {
		return false, imprint.Conflictf("episode %q belongs to another scope", ep.ID)
	}
	q := `UPDATE episodes SET workspace = $1, session_id = $2, status = $3, closed_by = $4, meta = $5, turns = $6,
		started_at = $7, ended_at = $8, updated_at = $9`
	vals := []any{ep.Workspace, ep.SessionID, string(ep.Status), string(ep.ClosedBy), row.meta, row.turns,
		tsArg(ep.StartedAt), tsArg(ep.EndedAt), row.updated.Time}
	if setTraceIDs {
		q += `, trace_ids = $10`
		vals = append(vals, row.ids)
	}
	if _, err := tx.Exec(ctx, q+` WHERE id = $`+itoa(len(vals)+1), append(vals, ep.ID)...); err != nil {
		return false, err
	}
	// The whole episode was written: turns appended live are replaced.
	_, err = tx.Exec(ctx, `DELETE FROM episode_turns WHERE episode_id = $1`, ep.ID)
	return false, err
}

// SaveEpisode inserts or updates the episode without touching its traces or
// (for an existing episode) its trace ids. ErrConflict when the id belongs
// to another scope; ErrInvalid for a missing scope, id or session id.
func (db *DB) SaveEpisode(ctx context.Context, ep imprint.Episode) error {
	if err := imprint.CheckEpisode(ep); err != nil {
		return err
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		_, err := upsertEpisode(ctx, tx, ep, false)
		return err
	})
	return dbErr("save episode", err)
}

// GetEpisode returns the episode, or ErrNotFound when it is not in scope.
func (db *DB) GetEpisode(ctx context.Context, scope imprint.Scope, id string) (imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return imprint.Episode{}, err
	}
	e, err := scanEpisode(db.pool.QueryRow(ctx, `SELECT `+episodeCols+` FROM episodes
		WHERE id = $1 AND tenant = $2 AND user_id = $3 AND agent = $4`, id, scope.Tenant, scope.User, scope.Agent))
	if errors.Is(err, pgx.ErrNoRows) {
		return e, imprint.NotFoundf("episode %q not found", id)
	}
	if err == nil {
		err = withTurnRows(ctx, db.pool, &e)
	}
	return e, dbErr("get episode", err)
}

const traceCols = `t.rid, t.id, t.episode_id, t.tenant, t.user_id, t.agent, t.workspace, t.session_id, t.step_key, t.step_index,
	t.ts, t.user_text, t.agent_text, t.tool_calls, t.reflection, t.reflection_source, t.alpha, t.usable, t.value,
	t.priority, t.r_human, t.depth, t.is_subagent, t.truncated, t.vec_summary, t.vec_action, t.embedder, t.created_at`

func scanTrace(row pgx.Row) (imprint.Trace, error) {
	var t imprint.Trace
	var rid int64
	var tools string
	var tsv *time.Time
	var created time.Time
	if err := row.Scan(&rid, &t.ID, &t.EpisodeID, &t.Scope.Tenant, &t.Scope.User, &t.Scope.Agent, &t.Workspace,
		&t.SessionID, &t.StepKey, &t.StepIndex, &tsv, &t.UserText, &t.AgentText, &tools, &t.Reflection, &t.ReflectionSource,
		&t.Alpha, &t.Usable, &t.Value, &t.Priority, &t.RHuman, &t.Depth, &t.IsSubagent, &t.Truncated,
		&t.VecSummary, &t.VecAction, &t.Embedder, &created); err != nil {
		return t, err
	}
	t.TS, t.CreatedAt = tsOf(tsv), imprint.At(created)
	if err := json.Unmarshal([]byte(tools), &t.ToolCalls); err != nil {
		return t, fmt.Errorf("trace %s tool calls: %w", t.ID, err)
	}
	if t.ToolCalls == nil {
		t.ToolCalls = []imprint.ToolCall{}
	}
	if len(t.VecSummary) == 0 {
		t.VecSummary = nil
	}
	if len(t.VecAction) == 0 {
		t.VecAction = nil
	}
	t.HasVecSummary, t.HasVecAction = len(t.VecSummary) > 0, len(t.VecAction) > 0
	return t, nil
}

// SaveCapture writes the episode and its traces in one transaction: traces
// are upserted by step key, traces of vanished steps are deleted, and the
// episode's trace ids become the traces' ids in order. ErrConflict when the
// episode (or a trace id) belongs to another scope or episode.
func (db *DB) SaveCapture(ctx context.Context, ep imprint.Episode, traces []imprint.Trace) error {
	ep, keys, err := imprint.CheckCapture(ep, traces)
	if err != nil {
		return err
	}
	return dbErr("save capture", db.writeCaptures(ctx, []imprint.Episode{ep}, [][]imprint.Trace{traces},
		[]map[string]bool{keys}, func(_ int, err error) error { return err }))
}

// SupportsCaptureSaver implements imprint.CaptureSaver: always true.
func (db *DB) SupportsCaptureSaver() bool { return true }

// SaveCaptures writes several episodes with their traces, traces[i] being
// those of eps[i], in one transaction, each as SaveCapture writes it.
// Nothing is written when one of them is invalid or conflicts.
func (db *DB) SaveCaptures(ctx context.Context, eps []imprint.Episode, traces [][]imprint.Trace) error {
	eps, allKeys, err := imprint.CheckCaptures(eps, traces)
	if err != nil {
		return err
	}
	return dbErr("save captures", db.writeCaptures(ctx, eps, traces, allKeys, func(c int, err error) error {
		return fmt.Errorf("captures[%d]: %w", c, err)
	}))
}

// writeCaptures writes validated captures in one transaction; wrap names a
// failing capture in the error.
func (db *DB) writeCaptures(ctx context.Context, eps []imprint.Episode, traces [][]imprint.Trace, keys []map[string]bool,
	wrap func(c int, err error) error) error {
	now := imprint.Now()
	err := db.writeTx(ctx, func(tx pgx.Tx) error {
		// The keyword index of every trace, in one query at most.
		var texts, cjks []string
		var ntoks []int
		traces := slices.Clone(traces)
		for c := range eps {
			traces[c] = slices.Clone(traces[c])
			for i := range traces[c] {
				t := &traces[c][i]
				t.EpisodeID, t.SessionID, t.Scope, t.Workspace = eps[c].ID, eps[c].SessionID, eps[c].Scope, eps[c].Workspace
				if t.CreatedAt.IsZero() {
					t.CreatedAt = now
				}
				words, cjk := keyword.IndexTexts(imprint.TraceText(*t))
				texts, cjks, ntoks = append(texts, words), append(cjks, cjk), append(ntoks, keyword.TokenCount(words))
			}
		}
		ents, err := db.tsvectorEntries(ctx, tx, texts...)
		if err != nil {
			return err
		}
		words := make([]string, len(ents))
		var b []byte
		for i, e := range ents {
			b = appendTSVector(b[:0], e)
			words[i] = string(b)
		}
		idx := make([]traceIndex, len(eps))
		for c := range eps {
			n := len(traces[c])
			idx[c] = traceIndex{words[:n], cjks[:n], ntoks[:n], ents[:n]}
			words, cjks, ntoks, ents = words[n:], cjks[n:], ntoks[n:], ents[n:]
		}
		if done, err := db.insertNewCaptures(ctx, tx, eps, traces, idx); done || err != nil {
			return err
		}
		for c := range eps {
			if err := saveCaptureTx(ctx, tx, eps[c], traces[c], keys[c], idx[c]); err != nil {
				return wrap(c, err)
			}
		}
		return nil
	})
	if err == nil {
		n := 0
		for _, trs := range traces {
			n += len(trs)
			for _, t := range trs {
				db.noteVectors(ctx, "traces", t.Embedder, max(len(t.VecSummary), len(t.VecAction)), vecCols[imprint.KindTrace]...)
			}
		}
		db.grew("episodes", len(eps))
		db.grew("traces", n)
	}
	return err
}

// traceIndex is the keyword index of some traces: their tsvectors, CJK
// runs and lengths in tokens (keyword.TokenCount of their words).
type traceIndex struct {
	words, cjk []string
	ntok       []int
	// ents are the lexeme positions of the tsvectors (words the literals).
	ents [][]lexPos
}

const (
	traceUpdateSQL = `UPDATE traces SET id = $1, tenant = $2, user_id = $3, agent = $4, workspace = $5,
		session_id = $6, step_index = $7, ts = $8, user_text = $9, agent_text = $10, tool_calls = $11, reflection = $12,
		reflection_source = $13, alpha = $14, usable = $15, depth = $16,
		is_subagent = $17, truncated = $18, vec_summary = $19, vec_action = $20, embedder = $21, dim = $22,
		words = $23::tsvector, cjk = $24, ntok = $25
		WHERE rid = $26`
	traceInsertSQL = `INSERT INTO traces (id, tenant, user_id, agent, workspace, session_id,
		step_index, ts, user_text, agent_text, tool_calls, reflection, reflection_source, alpha, usable,
		depth, is_subagent, truncated, vec_summary, vec_action, embedder, dim, words, cjk, ntok,
		value, priority, r_human, episode_id, step_key, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
		$23::tsvector, $24, $25, $26, $27, $28, $29, $30, $31)`
	// traceInsertMany inserts new traces of one episode ($1-$6 its scope,
	// workspace, session and id), rows of traceRowValues following, in
	// order.
	traceInsertMany = `INSERT INTO traces (id, tenant, user_id, agent, workspace, session_id,
		step_index, ts, user_text, agent_text, tool_calls, reflection, reflection_source, alpha, usable,
		depth, is_subagent, truncated, vec_summary, vec_action, embedder, dim, words, cjk, ntok,
		value, priority, r_human, episode_id, step_key, created_at) VALUES `
	traceRowValues = `(?, $1, $2, $3, $4, $5, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::tsvector, ?, ?,
		?, ?, ?, $6, ?, ?)`
)

// toolCallsJSON is the tool_calls column of t: its tool calls in JSON,
// [] for none.
func toolCallsJSON(t imprint.Trace) (string, error) {
	if t.ToolCalls == nil {
		return "[]", nil
	}
	return jsonText(t.ToolCalls)
}

// traceRow is the values of traceInsertSQL's and traceUpdateSQL's first
// 25 placeholders for t, whose keyword index is words, cjk and ntok.
func traceRow(t imprint.Trace, words, cjk string, ntok int) ([]any, error) {
	toolsJSON, err := toolCallsJSON(t)
	if err != nil {
		return nil, err
	}
	dim := max(len(t.VecSummary), len(t.VecAction))
	return []any{t.ID, t.Scope.Tenant, t.Scope.User, t.Scope.Agent, t.Workspace, t.SessionID, t.StepIndex,
		tsArg(t.TS), t.UserText, t.AgentText, toolsJSON, t.Reflection, string(t.ReflectionSource), t.Alpha, t.Usable,
		t.Depth, t.IsSubagent, t.Truncated, vecArg(t.VecSummary), vecArg(t.VecAction), t.Embedder, dim, words, cjk, ntok}, nil
}

// saveCaptureTx is SaveCapture's transaction body for one episode; keys
// are the step keys of traces (whose episode, scope and creation time are
// set) and idx their keyword index.
func saveCaptureTx(ctx context.Context, tx pgx.Tx, ep imprint.Episode, traces []imprint.Trace, keys map[string]bool, idx traceIndex) error {
	inserted, err := upsertEpisode(ctx, tx, ep, true)
	if err != nil {
		return err
	}
	existing := map[string]int64{}
	if !inserted {
		// A new episode has no traces yet.
		rows, err := tx.Query(ctx, `SELECT rid, step_key FROM traces WHERE episode_id = $1`, ep.ID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var rid int64
			var key string
			if err := rows.Scan(&rid, &key); err != nil {
				rows.Close()
				return err
			}
			existing[key] = rid
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	// Vanished steps go first, so a surviving step may take over an id.
	var vanished []int64
	for key, rid := range existing {
		if !keys[key] {
			vanished = append(vanished, rid)
		}
	}
	if len(vanished) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM traces WHERE rid = ANY($1)`, vanished); err != nil {
			return err
		}
	}
	if len(existing) == 0 && len(traces) > 0 {
		// Only new steps: one statement, unless an id is taken, which
		// the statements one trace at a time then name.
		sp, err := tx.Begin(ctx)
		if err != nil {
			return err
		}
		if err := insertTraces(ctx, sp, ep, traces, idx); err != nil {
			_ = sp.Rollback(ctx)
			if !isUnique(err) {
				return err
			}
		} else {
			return sp.Commit(ctx)
		}
	}
	for i, t := range traces {
		vals, err := traceRow(t, idx.words[i], idx.cjk[i], idx.ntok[i])
		if err != nil {
			return err
		}
		// A savepoint keeps a unique violation from aborting the
		// transaction, so it can be reported as a conflict.
		sp, err := tx.Begin(ctx)
		if err != nil {
			return err
		}
		if rid, ok := existing[t.StepKey]; ok {
			// A re-capture rewrites what capture computes and keeps what
			// later stages learned: value, priority and r_human.
			_, err = sp.Exec(ctx, traceUpdateSQL, append(vals, rid)...)
		} else {
			_, err = sp.Exec(ctx, traceInsertSQL, append(vals, t.Value, t.Priority, t.RHuman, ep.ID, t.StepKey, t.CreatedAt.Time)...)
		}
		if err != nil {
			_ = sp.Rollback(ctx)
			if isUnique(err) {
				return imprint.Conflictf("trace id %q belongs to another step or episode", t.ID)
			}
			return err
		}
		if err := sp.Commit(ctx); err != nil {
			return err
		}
	}
	return nil
}

// insertTraces inserts the new traces of ep, a statement per
// maxRowsPerInsert of them.
func insertTraces(ctx context.Context, tx pgx.Tx, ep imprint.Episode, traces []imprint.Trace, idx traceIndex) error {
	q := &pgx.Batch{}
	if err := queueTraceInserts(q, ep, traces, idx); err != nil {
		return err
	}
	return sendBatch(ctx, tx, q, func(br pgx.BatchResults) error {
		for range q.Len() {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
}

// queueTraceInserts queues on q the inserts of the new traces of ep, a
// statement per maxRowsPerInsert of them.
func queueTraceInserts(q *pgx.Batch, ep imprint.Episode, traces []imprint.Trace, idx traceIndex) error {
	for start := 0; start < len(traces); start += maxRowsPerInsert {
		end := min(start+maxRowsPerInsert, len(traces))
		args := []any{ep.Scope.Tenant, ep.Scope.User, ep.Scope.Agent, ep.Workspace, ep.SessionID, ep.ID}
		for i := start; i < end; i++ {
			t := traces[i]
			vals, err := traceRow(t, idx.words[i], idx.cjk[i], idx.ntok[i])
			if err != nil {
				return err
			}
			// traceRow's values without the episode's, then the rest.
			args = append(args, vals[0])
			args = append(args, vals[6:]...)
			args = append(args, t.Value, t.Priority, t.RHuman, t.StepKey, t.CreatedAt.Time)
		}
		q.Queue(traceInsertMany+valuesRows(traceRowValues, 6, end-start), args...)
	}
	return nil
}

// insertNewCaptures writes captures whose episodes are all new in one
// round trip: behind a savepoint, the episodes' inserts and then all their
// traces', a statement per maxRowsPerInsert rows of each, so that an
// import's statements are few and mostly of one shape, whose generic plan
// the transaction keeps (writeTx): planning a multi-row insert
// afresh each time cost more than executing it. done is false, with the
// savepoint rolled back, when an episode is stored already or a trace id
// is taken: saveCaptureTx then writes each capture (updating, deleting
// vanished steps, or naming the conflict). Unless db.noCopy, the traces
// go in one COPY (copy.go) after the episodes' round trip.
func (db *DB) insertNewCaptures(ctx context.Context, tx pgx.Tx, eps []imprint.Episode, traces [][]imprint.Trace, idx []traceIndex) (done bool, err error) {
	q := &pgx.Batch{}
	q.Queue(`SAVEPOINT imprint_new_captures`)
	var epArgs []any
	for _, ep := range eps {
		row, err := episodeRow(ep)
		if err != nil {
			return false, err
		}
		epArgs = append(epArgs, row.vals...)
	}
	epStmts := queueRows(q, episodeInsertMany, episodeRowValues, episodeInsertConflict, episodeRowArgs, epArgs)
	var trArgs []any
	for c, ep := range eps {
		if !db.noCopy {
			break
		}
		for i, t := range traces[c] {
			vals, err := traceRow(t, idx[c].words[i], idx[c].cjk[i], idx[c].ntok[i])
			if err != nil {
				return false, err
			}
			trArgs = append(trArgs, vals...)
			trArgs = append(trArgs, t.Value, t.Priority, t.RHuman, ep.ID, t.StepKey, t.CreatedAt.Time)
		}
	}
	trStmts := queueRows(q, traceInsertMany, traceRowAll, "", traceRowArgs, trArgs)
	var stored int64
	err = sendBatch(ctx, tx, q, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil { // the savepoint
			return err
		}
		for range epStmts {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			stored += tag.RowsAffected()
		}
		for range trStmts {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && stored == int64(len(eps)) && !db.noCopy {
		err = copyTraces(ctx, tx, eps, traces, idx)
	}
	switch {
	case err == nil && stored == int64(len(eps)):
		return true, nil
	case err != nil && !isUnique(err):
		return false, err
	}
	_, err = tx.Exec(ctx, `ROLLBACK TO SAVEPOINT imprint_new_captures`)
	return false, err
}

// episodeInsertMany inserts new episodes, rows of episodeRowValues (the
// values of episodeRow each), nothing for an id stored; traceRowAll is a
// row of traceInsertMany with all of traceInsertSQL's values.
const (
	episodeInsertMany     = `INSERT INTO episodes (` + episodeCols + `) VALUES `
	episodeRowValues      = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	episodeInsertConflict = ` ON CONFLICT (id) DO NOTHING`
	traceRowAll           = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::tsvector, ?, ?,
		?, ?, ?, ?, ?, ?)`
	traceRowArgs   = 31
	episodeRowArgs = 15
)

// queueRows queues on q the multi-row statements head + rows of row +
// tail for args, perRow values a row, maxRowsPerInsert rows a statement;
// it returns how many it queued.
func queueRows(q *pgx.Batch, head, row, tail string, perRow int, args []any) int {
	n := 0
	for start := 0; start < len(args); start += perRow * maxRowsPerInsert {
		end := min(start+perRow*maxRowsPerInsert, len(args))
		q.Queue(head+valuesRows(row, 0, (end-start)/perRow)+tail, args[start:end]...)
		n++
	}
	return n
}

// GetTrace returns the trace, or ErrNotFound when it is not in scope.
func (db *DB) GetTrace(ctx context.Context, scope imprint.Scope, id string) (imprint.Trace, error) {
	if err := validScope(scope); err != nil {
		return imprint.Trace{}, err
	}
	t, err := scanTrace(db.pool.QueryRow(ctx, `SELECT `+traceCols+` FROM traces t
		WHERE t.id = $1 AND t.tenant = $2 AND t.user_id = $3 AND t.agent = $4`, id, scope.Tenant, scope.User, scope.Agent))
	if errors.Is(err, pgx.ErrNoRows) {
		return t, imprint.NotFoundf("trace %q not found", id)
	}
	return t, dbErr("get trace", err)
}

// collectTraces reads every trace of rows (err is the query's error).
func collectTraces(op string, rows pgx.Rows, err error) ([]imprint.Trace, error) {
	if err != nil {
		return nil, dbErr(op, err)
	}
	defer rows.Close()
	out := []imprint.Trace{}
	for rows.Next() {
		t, err := scanTrace(rows)
		if err != nil {
			return nil, dbErr(op, err)
		}
		out = append(out, t)
	}
	return out, dbErr(op, rows.Err())
}

// ListTraces returns the scope's traces in step order: episodes in the order
// they were created, steps by index. Limit 0 means 100.
func (db *DB) ListTraces(ctx context.Context, scope imprint.Scope, f imprint.TraceFilter) ([]imprint.Trace, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	var a args
	q := `SELECT ` + traceCols + ` FROM traces t JOIN episodes e ON e.id = t.episode_id WHERE ` + a.scope("t", scope)
	if f.EpisodeID != "" {
		q += ` AND t.episode_id = ` + a.add(f.EpisodeID)
	}
	if f.SessionID != "" {
		q += ` AND t.session_id = ` + a.add(f.SessionID)
	}
	q += a.workspace("t", f.Workspace, f.IncludeGlobal)
	q += ` ORDER BY e.created_at, e.id, t.step_index, t.rid LIMIT ` + a.add(listLimit(f.Limit))
	rows, err := db.pool.Query(ctx, q, a...)
	return collectTraces("list traces", rows, err)
}
