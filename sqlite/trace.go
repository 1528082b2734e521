package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/vector"
)

const traceCols = `t.rid, t.id, t.episode_id, t.tenant, t.user_id, t.agent, t.workspace, t.session_id, t.step_key, t.step_index,
	t.ts, t.user_text, t.agent_text, t.tool_calls, t.reflection, t.reflection_source, t.alpha, t.usable, t.value,
	t.priority, t.r_human, t.depth, t.is_subagent, t.truncated, t.vec_summary, t.vec_action, t.embedder, t.created_at`

func scanTrace(row interface{ Scan(...any) error }) (imprint.Trace, error) {
	var t imprint.Trace
	var rid int64
	var tsS, tools, created string
	var refl sql.NullString
	var rh sql.NullFloat64
	var usable, sub, trunc int
	var vs, va []byte
	if err := row.Scan(&rid, &t.ID, &t.EpisodeID, &t.Scope.Tenant, &t.Scope.User, &t.Scope.Agent, &t.Workspace,
		&t.SessionID, &t.StepKey, &t.StepIndex, &tsS, &t.UserText, &t.AgentText, &tools, &refl, &t.ReflectionSource,
		&t.Alpha, &usable, &t.Value, &t.Priority, &rh, &t.Depth, &sub, &trunc, &vs, &va, &t.Embedder, &created); err != nil {
		return t, err
	}
	t.TS, t.CreatedAt = parseTS(tsS), parseTS(created)
	if err := json.Unmarshal([]byte(tools), &t.ToolCalls); err != nil {
		return t, fmt.Errorf("trace %s tool calls: %w", t.ID, err)
	}
	if t.ToolCalls == nil {
		t.ToolCalls = []imprint.ToolCall{}
	}
	if refl.Valid {
		t.Reflection = &refl.String
	}
	if rh.Valid {
		t.RHuman = &rh.Float64
	}
	t.Usable, t.IsSubagent, t.Truncated = usable != 0, sub != 0, trunc != 0
	var err error
	if len(vs) > 0 {
		if t.VecSummary, err = vector.Decode(vs); err != nil {
			return t, fmt.Errorf("trace %s: %w", t.ID, err)
		}
	}
	if len(va) > 0 {
		if t.VecAction, err = vector.Decode(va); err != nil {
			return t, fmt.Errorf("trace %s: %w", t.ID, err)
		}
	}
	t.HasVecSummary, t.HasVecAction = len(t.VecSummary) > 0, len(t.VecAction) > 0
	return t, nil
}

func blobOrNil(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return vector.Encode(v)
}

// The statements of SaveCapture.
var (
	traceStepsSQL  = wsql(`SELECT rid, step_key FROM traces WHERE episode_id = ?`)
	traceUpdateSQL = wsql(`UPDATE traces SET id = ?, tenant = ?, user_id = ?, agent = ?, workspace = ?,
		session_id = ?, step_index = ?, ts = ?, user_text = ?, agent_text = ?, tool_calls = ?, reflection = ?,
		reflection_source = ?, alpha = ?, usable = ?, depth = ?,
		is_subagent = ?, truncated = ?, vec_summary = ?, vec_action = ?, embedder = ?, dim = ?
		WHERE rid = ?`)
	traceInsertSQL = wsql(`INSERT INTO traces (id, tenant, user_id, agent, workspace, session_id,
		step_index, ts, user_text, agent_text, tool_calls, reflection, reflection_source, alpha, usable, value,
		priority, r_human, depth, is_subagent, truncated, vec_summary, vec_action, embedder, dim,
		episode_id, step_key, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
)

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

// GetTrace returns the trace, or ErrNotFound when it is not in scope.
func (db *DB) GetTrace(ctx context.Context, scope imprint.Scope, id string) (imprint.Trace, error) {
	if err := validScope(scope); err != nil {
		return imprint.Trace{}, err
	}
	t, err := scanTrace(db.r.QueryRowContext(ctx, `SELECT `+traceCols+` FROM traces t WHERE t.id = ? AND `+scopeWhere("t"),
		append([]any{id}, scopeArgs(scope)...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return t, imprint.NotFoundf("trace %q not found", id)
	}
	return t, dbErr("get trace", err)
}

// ListTraces returns the scope's traces in step order: episodes in the order
// they were created, steps by index. Limit 0 means 100, a negative Limit
// no limit.
func (db *DB) ListTraces(ctx context.Context, scope imprint.Scope, f imprint.TraceFilter) ([]imprint.Trace, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	f.Limit = listLimit(f.Limit)
	q := `SELECT ` + traceCols + ` FROM traces t JOIN episodes e ON e.id = t.episode_id WHERE ` + scopeWhere("t")
	args := scopeArgs(scope)
	if f.EpisodeID != "" {
		q += ` AND t.episode_id = ?`
		args = append(args, f.EpisodeID)
	}
	if f.SessionID != "" {
		q += ` AND t.session_id = ?`
		args = append(args, f.SessionID)
	}
	w, wargs := workspaceWhere("t", f.Workspace, f.IncludeGlobal)
	q, args = q+w, append(args, wargs...)
	q += ` ORDER BY e.created_at, e.id, t.step_index, t.rid LIMIT ?`
	rows, err := db.r.QueryContext(ctx, q, append(args, f.Limit)...)
	if err != nil {
		return nil, dbErr("list traces", err)
	}
	defer rows.Close()
	out := []imprint.Trace{}
	for rows.Next() {
		t, err := scanTrace(rows)
		if err != nil {
			return nil, dbErr("list traces", err)
		}
		out = append(out, t)
	}
	return out, dbErr("list traces", rows.Err())
}
