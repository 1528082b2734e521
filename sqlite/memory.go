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

const memoryCols = `m.rid, m.id, m.tenant, m.user_id, m.agent, m.workspace, m.session_id, m.content, m.type, m.priority,
	m.scene_name, m.source_message_ids, m.metadata, m.timestamps, m.created_at, m.updated_at, m.version,
	m.superseded_by, m.supersedes, m.extractor, m.content_hash, m.vec, m.embedder, m.forgotten_at`

// memoryLive is the condition on a memories alias m that the memory is
// live: neither superseded nor forgotten.
const memoryLive = ` AND m.superseded_by IS NULL AND m.forgotten_at IS NULL`

func scanMemory(row interface{ Scan(...any) error }) (imprint.Memory, error) {
	var m imprint.Memory
	var rid int64
	var src, meta, stamps, created, updated, sups string
	var supBy, forgotten sql.NullString
	var vec []byte
	if err := row.Scan(&rid, &m.ID, &m.Scope.Tenant, &m.Scope.User, &m.Scope.Agent, &m.Workspace, &m.SessionID,
		&m.Content, &m.Type, &m.Priority, &m.SceneName, &src, &meta, &stamps, &created, &updated, &m.Version,
		&supBy, &sups, &m.Extractor, &m.ContentHash, &vec, &m.Embedder, &forgotten); err != nil {
		return m, err
	}
	for _, f := range []struct {
		name string
		text string
		dst  any
	}{{"source_message_ids", src, &m.SourceMessageIDs}, {"metadata", meta, &m.Metadata},
		{"timestamps", stamps, &m.Timestamps}, {"supersedes", sups, &m.Supersedes}} {
		if err := json.Unmarshal([]byte(f.text), f.dst); err != nil {
			return m, fmt.Errorf("memory %s %s: %w", m.ID, f.name, err)
		}
	}
	if m.SourceMessageIDs == nil {
		m.SourceMessageIDs = []string{}
	}
	if m.Timestamps == nil {
		m.Timestamps = []imprint.Time{}
	}
	if m.Supersedes == nil {
		m.Supersedes = []string{}
	}
	if supBy.Valid {
		m.SupersededBy = &supBy.String
	}
	if forgotten.Valid && forgotten.String != "" {
		at := parseTS(forgotten.String)
		m.ForgottenAt = &at
	}
	m.CreatedAt, m.UpdatedAt = parseTS(created), parseTS(updated)
	if len(vec) > 0 {
		v, err := vector.Decode(vec)
		if err != nil {
			return m, fmt.Errorf("memory %s: %w", m.ID, err)
		}
		m.Vec = v
	}
	return m, nil
}

// The statements of PutMemory: insert a new id (no row when the id
// exists), rewrite an existing id of the same scope (no row for another
// scope; the arguments are those of the insert), supersede a target.
// They run on the raw write path, which prepares them on first use.
var (
	memoryInsertSQL = `INSERT INTO memories (tenant, user_id, agent, workspace, session_id, content,
		type, priority, scene_name, source_message_ids, metadata, timestamps, created_at, updated_at, version,
		superseded_by, supersedes, extractor, content_hash, vec, embedder, dim, id, forgotten_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING RETURNING rid`
	memoryUpdateSQL = `UPDATE memories SET tenant = ?1, user_id = ?2, agent = ?3, workspace = ?4,
		session_id = ?5, content = ?6, type = ?7, priority = ?8, scene_name = ?9, source_message_ids = ?10, metadata = ?11,
		timestamps = ?12, created_at = ?13, updated_at = ?14, version = ?15, superseded_by = ?16, supersedes = ?17,
		extractor = ?18, content_hash = ?19, vec = ?20, embedder = ?21, dim = ?22, forgotten_at = ?24
		WHERE id = ?23 AND tenant = ?1 AND user_id = ?2 AND agent = ?3 RETURNING rid`
	memorySupersedeSQL = `UPDATE memories SET superseded_by = ?
		WHERE id = ? AND ` + scopeWhere("") + ` AND superseded_by IS NULL RETURNING rid`
)

// PutMemory writes m (row, keyword indexes, vector) and marks each id in
// supersede as superseded by m, in one transaction. Writing an existing id
// of the same scope replaces it. ErrConflict when m's id belongs to another
// scope or a target is already superseded or not in scope; ErrInvalid for a
// missing scope, id, content or type.
func (db *DB) PutMemory(ctx context.Context, m imprint.Memory, supersede []string) error {
	return db.PutMemories(ctx, []imprint.MemoryPut{{Memory: m, Supersede: supersede}})
}

var _ imprint.MemoryBatchWriter = (*DB)(nil)

// SupportsMemoryBatch implements imprint.MemoryBatchWriter: always true.
func (db *DB) SupportsMemoryBatch() bool { return true }

// PutMemories implements imprint.MemoryBatchWriter: each put as PutMemory
// writes it, in order, in one transaction; any error writes nothing.
func (db *DB) PutMemories(ctx context.Context, puts []imprint.MemoryPut) error {
	ws := make([]memoryWrite, len(puts))
	for i, p := range puts {
		w, err := newMemoryWrite(p.Memory, p.Supersede)
		if err != nil {
			return err
		}
		ws[i] = w
	}
	if len(ws) == 0 {
		return nil
	}
	err := db.rawWriteTx(ctx, func(tx *rawTx) (func(), error) {
		fts := rawFTSWriter(tx, "memory")
		afters := make([]func(), 0, len(ws))
		for i := range ws {
			after, err := db.putMemoryTx(tx, fts, &ws[i])
			if err != nil {
				return nil, err
			}
			afters = append(afters, after)
		}
		return func() {
			for _, f := range afters {
				f()
			}
		}, nil
	})
	return dbErr("put memory", err)
}

// memoryWrite is a memory made ready to write: checked, with its JSON
// columns encoded.
type memoryWrite struct {
	m                       imprint.Memory
	supersede               []string
	src, meta, stamps, sups string
	supBy, forgotten        any
	live                    bool
}

// newMemoryWrite checks m (imprint.MemoryToPut) and encodes its columns.
func newMemoryWrite(m imprint.Memory, supersede []string) (memoryWrite, error) {
	m, err := imprint.MemoryToPut(m, supersede, imprint.Now())
	if err != nil {
		return memoryWrite{}, err
	}
	enc := func(v any, empty string) (string, error) {
		s, err := jsonText(v)
		if s == "null" {
			s = empty
		}
		return s, err
	}
	w := memoryWrite{m: m, supersede: supersede}
	var err1, err2, err3, err4 error
	w.src, err1 = enc(m.SourceMessageIDs, "[]")
	w.meta, err2 = enc(m.Metadata, "{}")
	w.stamps, err3 = enc(m.Timestamps, "[]")
	w.sups, err4 = enc(m.Supersedes, "[]")
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return w, fmt.Errorf("put memory: %w", err)
	}
	if m.SupersededBy != nil {
		w.supBy = *m.SupersededBy
	}
	if m.ForgottenAt != nil && !m.ForgottenAt.IsZero() {
		w.forgotten = ts(*m.ForgottenAt)
	}
	w.live = m.SupersededBy == nil && w.forgotten == nil
	return w, nil
}

// putMemoryTx writes w in tx (row, keyword index through fts, superseded
// targets) and returns what to do to the vector index once committed.
func (db *DB) putMemoryTx(tx *rawTx, fts *ftsWriter, w *memoryWrite) (func(), error) {
	m := w.m
	vals := []any{m.Scope.Tenant, m.Scope.User, m.Scope.Agent, m.Workspace, m.SessionID, m.Content,
		string(m.Type), m.Priority, m.SceneName, w.src, w.meta, w.stamps, ts(m.CreatedAt), ts(m.UpdatedAt), m.Version,
		w.supBy, w.sups, m.Extractor, m.ContentHash, blobOrNil(m.Vec), m.Embedder, len(m.Vec), m.ID, w.forgotten}
	// A new id is one statement; an existing one is rewritten in place
	// when it belongs to the same scope.
	rid, ok, err := tx.queryInt64(memoryInsertSQL, vals...)
	if err == nil && !ok {
		rid, ok, err = tx.queryInt64(memoryUpdateSQL, vals...)
		if err == nil && !ok {
			return nil, imprint.Conflictf("memory %q belongs to another scope", m.ID)
		}
		if err == nil {
			err = fts.remove(rid)
		}
	}
	if err != nil {
		return nil, err
	}
	// Only live memories are in the keyword index.
	if w.live {
		if err := fts.insert(rid, m.Content); err != nil {
			return nil, err
		}
	}
	var targets []int64
	for _, id := range w.supersede {
		trid, ok, err := tx.queryInt64(memorySupersedeSQL, append([]any{m.ID, id}, scopeArgs(m.Scope)...)...)
		if err == nil && !ok {
			return nil, imprint.Conflictf("memory %q is already superseded or not in scope", id)
		}
		if err != nil {
			return nil, err
		}
		if err := fts.remove(trid); err != nil {
			return nil, err
		}
		targets = append(targets, trid)
	}
	live := w.live
	return func() {
		db.vecRemove(imprint.KindMemory, rid)
		if len(m.Vec) > 0 {
			db.vecUpsert(imprint.KindMemory, m.Embedder, rid, m.ID, m.Scope, m.SessionID, m.Workspace, live, m.Vec)
		}
		for _, t := range targets {
			db.vecRemove(imprint.KindMemory, t)
		}
	}, nil
}

func (db *DB) queryMemories(ctx context.Context, op, q string, args ...any) ([]imprint.Memory, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, dbErr(op, err)
	}
	defer rows.Close()
	out := []imprint.Memory{}
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, dbErr(op, err)
		}
		out = append(out, m)
	}
	return out, dbErr(op, rows.Err())
}

// GetMemory returns the memory (live or superseded), or ErrNotFound when it
// is not in scope.
func (db *DB) GetMemory(ctx context.Context, scope imprint.Scope, id string) (imprint.Memory, error) {
	if err := validScope(scope); err != nil {
		return imprint.Memory{}, err
	}
	m, err := scanMemory(db.r.QueryRowContext(ctx, `SELECT `+memoryCols+` FROM memories m WHERE m.id = ? AND `+scopeWhere("m"),
		append([]any{id}, scopeArgs(scope)...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return m, imprint.NotFoundf("memory %q not found", id)
	}
	return m, dbErr("get memory", err)
}

// ListMemories returns the scope's memories newest first by UpdatedAt;
// superseded and forgotten ones only with f.AllVersions. Limit 0 means
// 100, a negative Limit no limit.
func (db *DB) ListMemories(ctx context.Context, scope imprint.Scope, f imprint.MemoryFilter) ([]imprint.Memory, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	f.Limit = listLimit(f.Limit)
	q := `SELECT ` + memoryCols + ` FROM memories m WHERE ` + scopeWhere("m")
	args := scopeArgs(scope)
	if f.SessionID != "" {
		q += ` AND m.session_id = ?`
		args = append(args, f.SessionID)
	}
	w, wargs := workspaceWhere("m", f.Workspace, f.IncludeGlobal)
	q, args = q+w, append(args, wargs...)
	switch f.Type {
	case "":
	case imprint.MemoryInstruction:
		// A literal, so the planner can use memories_instructions.
		q += ` AND m.type = 'instruction'`
	default:
		q += ` AND m.type = ?`
		args = append(args, string(f.Type))
	}
	if !f.AllVersions {
		q += memoryLive
	}
	q += ` ORDER BY m.updated_at DESC, m.rid DESC LIMIT ?`
	return db.queryMemories(ctx, "list memories", q, append(args, f.Limit)...)
}

// FindMemoryByHash returns the scope's live memories whose content hash is
// hash, through the live-hash index.
func (db *DB) FindMemoryByHash(ctx context.Context, scope imprint.Scope, hash string) ([]imprint.Memory, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	if hash == "" {
		return []imprint.Memory{}, nil
	}
	return db.queryMemories(ctx, "find memory by hash", `SELECT `+memoryCols+` FROM memories m
		WHERE `+scopeWhere("m")+` AND m.content_hash = ?`+memoryLive+` ORDER BY m.rid`,
		append(scopeArgs(scope), hash)...)
}

// MemoryHistory returns the versions id supersedes, transitively, newest
// first. ErrNotFound when id is not in scope.
func (db *DB) MemoryHistory(ctx context.Context, scope imprint.Scope, id string) ([]imprint.Memory, error) {
	if _, err := db.GetMemory(ctx, scope, id); err != nil {
		return nil, err
	}
	args := append([]any{id}, scopeArgs(scope)...)
	args = append(args, scopeArgs(scope)...)
	// The chain is walked from id by superseded_by and each version read by
	// its id: without the hints the planner, lacking statistics, reads the
	// whole scope through its updated_at index (a second at 100k memories).
	return db.queryMemories(ctx, "memory history", `WITH RECURSIVE older(id) AS (
			SELECT id FROM memories INDEXED BY memories_superseded_by WHERE superseded_by = ? AND `+scopeWhere("")+`
			UNION
			SELECT m.id FROM memories m JOIN older o ON m.superseded_by = o.id
		)
		SELECT `+memoryCols+` FROM older o CROSS JOIN memories m ON m.id = o.id WHERE `+scopeWhere("m")+`
		ORDER BY m.updated_at DESC, m.version DESC, m.rid DESC`, args...)
}

// CountMemories counts the scope's live memories.
func (db *DB) CountMemories(ctx context.Context, scope imprint.Scope) (int, error) {
	if err := validScope(scope); err != nil {
		return 0, err
	}
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM memories m WHERE `+scopeWhere("m")+memoryLive,
		scopeArgs(scope)...).Scan(&n)
	return n, dbErr("count memories", err)
}
