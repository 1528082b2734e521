package sqlite

import (
	"context"
	"fmt"
	"sync"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/vector"
)

// vecKey names one in-memory vector index: the vectors of one kind made by
// one embedder.
type vecKey struct {
	kind     imprint.Kind
	embedder string
}

// vecRow is what the index knows about one matrix row, enough to filter
// before scoring.
type vecRow struct {
	rid     int64 // messages.seq, traces.rid or memories.rid
	id      string
	scope   int32
	session int32
	ws      int32 // workspace
	live    bool
}

// vecIndex is a flat, exact index built lazily from the BLOBs of one
// (kind, embedder) and kept up to date by the writes that follow. Removed
// or superseded records stay in the matrix, marked dead, until the process
// restarts; traces have up to two rows (summary and action vectors).
type vecIndex struct {
	mu       sync.RWMutex
	loaded   bool
	mat      vector.Matrix
	rows     []vecRow
	byRID    map[int64][2]int32
	scopes   map[string]int32
	sessions map[string]int32
	// workspaces interns workspace names, "" (none) included.
	workspaces map[string]int32
}

func newVecIndex() *vecIndex {
	return &vecIndex{byRID: map[int64][2]int32{}, scopes: map[string]int32{}, sessions: map[string]int32{}, workspaces: map[string]int32{}}
}

// scopeKey is the key of a scope in the index, its parts escaped so that
// distinct scopes never share one (imprint.AppendKeyParts).
func scopeKey(s imprint.Scope) string {
	return string(imprint.AppendKeyParts(nil, 0, s.Tenant, s.User, s.Agent))
}

func intern(m map[string]int32, s string) int32 {
	if id, ok := m[s]; ok {
		return id
	}
	id := int32(len(m) + 1)
	m[s] = id
	return id
}

// upsert sets the vectors of record rid (caller holds the write lock).
// Vectors of the wrong dimension are skipped.
func (x *vecIndex) upsert(rid int64, id string, scope imprint.Scope, session, workspace string, live bool, vecs ...[]float32) {
	slots, ok := x.byRID[rid]
	if !ok {
		slots = [2]int32{-1, -1}
	}
	sc, se, ws := intern(x.scopes, scopeKey(scope)), intern(x.sessions, session), intern(x.workspaces, workspace)
	for i, v := range vecs {
		if i >= 2 {
			break
		}
		if len(v) == 0 {
			if slots[i] >= 0 {
				x.rows[slots[i]].live = false
			}
			continue
		}
		if x.mat.Dim == 0 {
			x.mat.Dim = len(v)
		}
		if len(v) != x.mat.Dim {
			continue
		}
		row := vecRow{rid: rid, id: id, scope: sc, session: se, ws: ws, live: live}
		if slots[i] >= 0 {
			x.mat.Set(int(slots[i]), v)
			x.rows[slots[i]] = row
			continue
		}
		slots[i] = int32(x.mat.Add(v))
		x.rows = append(x.rows, row)
	}
	x.byRID[rid] = slots
}

func (x *vecIndex) remove(rid int64) {
	slots, ok := x.byRID[rid]
	if !ok {
		return
	}
	for _, s := range slots {
		if s >= 0 {
			x.rows[s].live = false
		}
	}
}

// index returns the index of key, loading it from the table on first use.
func (db *DB) index(ctx context.Context, key vecKey) (*vecIndex, error) {
	db.vmu.Lock()
	x, ok := db.vecs[key]
	if !ok {
		x = newVecIndex()
		db.vecs[key] = x
	}
	db.vmu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.loaded {
		return x, nil
	}
	if err := db.loadIndex(ctx, key, x); err != nil {
		// Start over next time rather than keep a partial index.
		x.mat, x.rows = vector.Matrix{}, nil
		x.byRID, x.scopes, x.sessions, x.workspaces = map[int64][2]int32{}, map[string]int32{}, map[string]int32{}, map[string]int32{}
		return nil, err
	}
	x.loaded = true
	return x, nil
}

func (db *DB) loadIndex(ctx context.Context, key vecKey, x *vecIndex) error {
	var q string
	switch key.kind {
	case imprint.KindMessage:
		q = `SELECT seq, id, tenant, user_id, agent, session_id, workspace, 1, vec, NULL FROM messages WHERE embedder = ? AND vec IS NOT NULL`
	case imprint.KindMemory:
		q = `SELECT rid, id, tenant, user_id, agent, session_id, workspace, superseded_by IS NULL AND forgotten_at IS NULL, vec, NULL FROM memories
			WHERE embedder = ? AND vec IS NOT NULL`
	case imprint.KindTrace:
		q = `SELECT rid, id, tenant, user_id, agent, session_id, workspace, 1, vec_summary, vec_action FROM traces
			WHERE embedder = ? AND (vec_summary IS NOT NULL OR vec_action IS NOT NULL)`
	default:
		return imprint.Invalidf("kind %q is not memory, trace or message", key.kind)
	}
	rows, err := db.r.QueryContext(ctx, q, key.embedder)
	if err != nil {
		return fmt.Errorf("load %s vectors: %w", key.kind, err)
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var id, session, ws string
		var s imprint.Scope
		var live int
		var b1, b2 []byte
		if err := rows.Scan(&rid, &id, &s.Tenant, &s.User, &s.Agent, &session, &ws, &live, &b1, &b2); err != nil {
			return fmt.Errorf("load %s vectors: %w", key.kind, err)
		}
		vecs := make([][]float32, 0, 2)
		for _, b := range [][]byte{b1, b2} {
			var v []float32
			if len(b) > 0 {
				if v, err = vector.Decode(b); err != nil {
					return fmt.Errorf("load %s vector %s: %w", key.kind, id, err)
				}
			}
			vecs = append(vecs, v)
		}
		x.upsert(rid, id, s, session, ws, live != 0, vecs...)
	}
	return rows.Err()
}

// vecUpsert applies a committed write to the loaded index of (kind,
// embedder); indexes not loaded yet will read the row when they load.
func (db *DB) vecUpsert(kind imprint.Kind, embedder string, rid int64, id string, scope imprint.Scope, session, workspace string, live bool, vecs ...[]float32) {
	db.vmu.Lock()
	x := db.vecs[vecKey{kind, embedder}]
	db.vmu.Unlock()
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.loaded {
		x.upsert(rid, id, scope, session, workspace, live, vecs...)
	}
}

// vecRemove marks rid dead in every loaded index of kind.
func (db *DB) vecRemove(kind imprint.Kind, rid int64) {
	db.vmu.Lock()
	var xs []*vecIndex
	for k, x := range db.vecs {
		if k.kind == kind {
			xs = append(xs, x)
		}
	}
	db.vmu.Unlock()
	for _, x := range xs {
		x.mu.Lock()
		if x.loaded {
			x.remove(rid)
		}
		x.mu.Unlock()
	}
}

// vecCandidate is one record found by a vector scan.
type vecCandidate struct {
	rid   int64
	score float64
}

// topK scans the index for q, filtering by scope, session, liveness and
// excluded ids before scoring. Traces score the better of their two rows.
func (x *vecIndex) topK(q imprint.VectorQuery, limit int) []vecCandidate {
	x.mu.RLock()
	defer x.mu.RUnlock()
	sc, ok := x.scopes[scopeKey(q.Scope)]
	if !ok || len(q.Vector) != x.mat.Dim {
		return nil
	}
	var se int32
	if q.SessionID != "" {
		if se, ok = x.sessions[q.SessionID]; !ok {
			return nil
		}
	}
	// ws and global are the workspaces kept (0: none); with no workspace
	// asked for, every one.
	var ws, global int32
	byWorkspace := q.Workspace != "" || q.IncludeGlobal
	if byWorkspace {
		ws = x.workspaces[q.Workspace]
		if q.IncludeGlobal {
			global = x.workspaces[""]
		}
		if ws == 0 && global == 0 {
			return nil
		}
	}
	var excl map[string]bool
	if len(q.ExcludeIDs) > 0 {
		excl = make(map[string]bool, len(q.ExcludeIDs))
		for _, id := range q.ExcludeIDs {
			excl[id] = true
		}
	}
	rows := x.rows
	keep := func(i int) bool {
		r := &rows[i]
		if !r.live || r.scope != sc || (se != 0 && r.session != se) {
			return false
		}
		if byWorkspace && (r.ws == 0 || (r.ws != ws && r.ws != global)) {
			return false
		}
		return excl == nil || !excl[r.id]
	}
	k := limit
	if q.Kind == imprint.KindTrace {
		k = 2 * limit // a trace has at most two rows, so 2k rows hold k traces
	}
	// A zero MinScore does not filter, like every zero field of a query.
	minScore := float32(q.MinScore)
	if q.MinScore == 0 {
		minScore = -2
	}
	res := x.mat.TopK(q.Vector, k, minScore, keep)
	out := make([]vecCandidate, 0, limit)
	seen := map[int64]bool{}
	for _, r := range res {
		rid := rows[r.Row].rid
		if seen[rid] {
			continue // the better row of this trace came first
		}
		seen[rid] = true
		out = append(out, vecCandidate{rid: rid, score: float64(r.Score)})
		if len(out) == limit {
			break
		}
	}
	return out
}
