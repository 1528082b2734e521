package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/keyword"
)

const memoryCols = `m.rid, m.id, m.tenant, m.user_id, m.agent, m.workspace, m.session_id, m.content, m.type, m.priority,
	m.scene_name, m.source_message_ids, m.metadata, m.timestamps, m.created_at, m.updated_at, m.version,
	m.superseded_by, m.supersedes, m.extractor, m.content_hash, m.vec, m.embedder, m.forgotten_at`

// memoryLive keeps the live memories of m: neither superseded nor forgotten.
const memoryLive = ` AND m.superseded_by IS NULL AND m.forgotten_at IS NULL`

func scanMemory(row pgx.Row) (imprint.Memory, error) {
	var m imprint.Memory
	var rid int64
	var src, meta, stamps, sups string
	var created, updated time.Time
	var forgotten *time.Time
	if err := row.Scan(&rid, &m.ID, &m.Scope.Tenant, &m.Scope.User, &m.Scope.Agent, &m.Workspace, &m.SessionID,
		&m.Content, &m.Type, &m.Priority, &m.SceneName, &src, &meta, &stamps, &created, &updated, &m.Version,
		&m.SupersededBy, &sups, &m.Extractor, &m.ContentHash, &m.Vec, &m.Embedder, &forgotten); err != nil {
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
	if len(m.Vec) == 0 {
		m.Vec = nil
	}
	m.CreatedAt, m.UpdatedAt = imprint.At(created), imprint.At(updated)
	if forgotten != nil {
		at := imprint.At(*forgotten)
		m.ForgottenAt = &at
	}
	return m, nil
}

func collectMemories(op string, rows pgx.Rows, err error) ([]imprint.Memory, error) {
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

// The statements of PutMemory: insert a new id (no row when the id
// exists), rewrite an existing id of the same scope (no row for another
// scope; the arguments are those of the insert), supersede a target.
const (
	memoryInsertSQL = `INSERT INTO memories (tenant, user_id, agent, workspace, session_id, content,
		type, priority, scene_name, source_message_ids, metadata, timestamps, created_at, updated_at, version,
		superseded_by, supersedes, extractor, content_hash, vec, embedder, dim, words, cjk, id, forgotten_at, ntok)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
		$23::tsvector, $24, $25, $26, $27)
		ON CONFLICT (id) DO NOTHING RETURNING rid`
	// memoryInsertMany inserts memories, rows of memoryRowValues (the
	// values of memoryInsertSQL each), nothing for an id stored.
	memoryInsertMany = `INSERT INTO memories (tenant, user_id, agent, workspace, session_id, content,
		type, priority, scene_name, source_message_ids, metadata, timestamps, created_at, updated_at, version,
		superseded_by, supersedes, extractor, content_hash, vec, embedder, dim, words, cjk, id, forgotten_at, ntok)
		VALUES `
	memoryRowValues = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::tsvector, ?, ?, ?, ?)`
	memoryInsertEnd = ` ON CONFLICT (id) DO NOTHING`
	memoryUpdateSQL = `UPDATE memories SET workspace = $4, session_id = $5, content = $6, type = $7, priority = $8,
		scene_name = $9, source_message_ids = $10, metadata = $11, timestamps = $12, created_at = $13, updated_at = $14,
		version = $15, superseded_by = $16, supersedes = $17, extractor = $18, content_hash = $19, vec = $20,
		embedder = $21, dim = $22, words = $23::tsvector, cjk = $24, forgotten_at = $26, ntok = $27
		WHERE id = $25 AND tenant = $1 AND user_id = $2 AND agent = $3 RETURNING rid`
	memorySupersedeSQL = `UPDATE memories SET superseded_by = $1
		WHERE id = $2 AND tenant = $3 AND user_id = $4 AND agent = $5 AND superseded_by IS NULL RETURNING rid`
)

// PutMemory writes m (row, keyword index, vector) and marks each id in
// supersede as superseded by m, in one transaction. Writing an existing id
// of the same scope replaces it. Of two nodes superseding one memory, one
// wins: the target's row is locked by the first update, and the second
// finds it superseded (ErrConflict). ErrConflict when m's id belongs to
// another scope or a target is already superseded or not in scope;
// ErrInvalid for a missing scope, id, content or type.
func (db *DB) PutMemory(ctx context.Context, m imprint.Memory, supersede []string) error {
	return db.PutMemories(ctx, []imprint.MemoryPut{{Memory: m, Supersede: supersede}})
}

var _ imprint.MemoryBatchWriter = (*DB)(nil)

// SupportsMemoryBatch implements imprint.MemoryBatchWriter: always true.
func (db *DB) SupportsMemoryBatch() bool { return true }

// PutMemories implements imprint.MemoryBatchWriter: each put as PutMemory
// writes it, in order, in one transaction (one commit); any error writes
// nothing. The statements of all puts go to the server in one round trip;
// when one of them finds its id stored already (a rewrite, whose update
// must come before the later statements), the transaction is done again a
// statement at a time.
func (db *DB) PutMemories(ctx context.Context, puts []imprint.MemoryPut) error {
	ws, err := db.memoryWrites(ctx, puts)
	if err != nil || len(ws) == 0 {
		return err
	}
	if len(ws) == 1 && len(ws[0].supersede) == 0 {
		// A new id superseding nothing is one statement, its own
		// transaction; an existing id goes on to the update below.
		var rid int64
		err := db.pool.QueryRow(ctx, memoryInsertSQL, ws[0].vals...).Scan(&rid)
		if err == nil {
			db.noteMemoryVectors(ctx, ws)
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return dbErr("put memory", err)
		}
	} else {
		err := db.writeTx(ctx, func(tx pgx.Tx) error { return putMemoriesBatch(ctx, tx, ws) })
		if err == nil {
			db.noteMemoryVectors(ctx, ws)
			return nil
		}
		if !errors.Is(err, errMemoryExists) {
			return dbErr("put memory", err)
		}
	}
	err = db.tx(ctx, func(tx pgx.Tx) error {
		for i := range ws {
			if err := putMemoryTx(ctx, tx, &ws[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		db.noteMemoryVectors(ctx, ws)
	}
	return dbErr("put memory", err)
}

// memoryWrite is a memory made ready to write: checked, with the
// arguments of memoryInsertSQL (and memoryUpdateSQL).
type memoryWrite struct {
	m         imprint.Memory
	supersede []string
	vals      []any
}

// memoryWrites checks and encodes puts, with the tsvectors of all of them
// made together.
func (db *DB) memoryWrites(ctx context.Context, puts []imprint.MemoryPut) ([]memoryWrite, error) {
	ws := make([]memoryWrite, len(puts))
	words := make([]string, len(puts))
	cjks := make([]string, len(puts))
	enc := func(v any, empty string) (string, error) {
		s, err := jsonText(v)
		if s == "null" {
			s = empty
		}
		return s, err
	}
	for i, p := range puts {
		m, err := imprint.MemoryToPut(p.Memory, p.Supersede, imprint.Now())
		if err != nil {
			return nil, err
		}
		src, err1 := enc(m.SourceMessageIDs, "[]")
		meta, err2 := enc(m.Metadata, "{}")
		stamps, err3 := enc(m.Timestamps, "[]")
		sups, err4 := enc(m.Supersedes, "[]")
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return nil, fmt.Errorf("put memory: %w", err)
		}
		words[i], cjks[i] = keyword.IndexTexts(m.Content)
		var forgotten any
		if m.ForgottenAt != nil {
			forgotten = tsArg(*m.ForgottenAt)
		}
		ws[i] = memoryWrite{m: m, supersede: p.Supersede, vals: []any{m.Scope.Tenant, m.Scope.User, m.Scope.Agent,
			m.Workspace, m.SessionID, m.Content, string(m.Type), m.Priority, m.SceneName, src, meta, stamps,
			m.CreatedAt.Time, m.UpdatedAt.Time, m.Version, m.SupersededBy, sups, m.Extractor, m.ContentHash,
			vecArg(m.Vec), m.Embedder, len(m.Vec), nil, cjks[i], m.ID, forgotten, keyword.TokenCount(words[i])}}
	}
	if len(ws) == 0 {
		return nil, nil
	}
	tsv, err := db.tsvectors(ctx, db.pool, words...)
	if err != nil {
		return nil, dbErr("put memory", err)
	}
	for i := range ws {
		ws[i].vals[22] = tsv[i]
	}
	return ws, nil
}

// errMemoryExists stops putMemoriesBatch at an id stored already.
var errMemoryExists = errors.New("memory id stored already")

// putMemoriesBatch sends the inserts and supersedes of ws in one batch and
// reads their results in order. errMemoryExists when an insert finds its
// id stored (the statements after it ran against a row not yet rewritten;
// the caller rolls back and goes a statement at a time).
func putMemoriesBatch(ctx context.Context, tx pgx.Tx, ws []memoryWrite) error {
	// The inserts of consecutive writes share statements of up to
	// maxRowsPerInsert rows (with the transaction's generic plans, as
	// insertNewCaptures says), in order; a write that supersedes ends
	// its statement, and its supersedes follow it.
	b := &pgx.Batch{}
	type stmt struct{ rows, supersedes int }
	var stmts []stmt
	var rowArgs []any
	var pending int
	flush := func(supersedes int) {
		if pending == 0 {
			return
		}
		b.Queue(memoryInsertMany+valuesRows(memoryRowValues, 0, pending)+memoryInsertEnd, rowArgs...)
		stmts = append(stmts, stmt{pending, supersedes})
		rowArgs, pending = nil, 0
	}
	for _, w := range ws {
		rowArgs = append(rowArgs, w.vals...)
		pending++
		if len(w.supersede) > 0 || pending == maxRowsPerInsert {
			flush(len(w.supersede))
		}
		for _, id := range w.supersede {
			b.Queue(memorySupersedeSQL, w.m.ID, id, w.m.Scope.Tenant, w.m.Scope.User, w.m.Scope.Agent)
		}
	}
	flush(0)
	var supersedes []string
	for _, w := range ws {
		supersedes = append(supersedes, w.supersede...)
	}
	br := tx.SendBatch(ctx, b)
	err := func() error {
		sup := 0
		for _, st := range stmts {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			if tag.RowsAffected() != int64(st.rows) {
				return errMemoryExists
			}
			for range st.supersedes {
				var rid int64
				if err := br.QueryRow().Scan(&rid); errors.Is(err, pgx.ErrNoRows) {
					return imprint.Conflictf("memory %q is already superseded or not in scope", supersedes[sup])
				} else if err != nil {
					return err
				}
				sup++
			}
		}
		return nil
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// putMemoryTx writes w in tx a statement at a time: insert, or rewrite an
// id of the same scope, then supersede the targets.
func putMemoryTx(ctx context.Context, tx pgx.Tx, w *memoryWrite) error {
	var rid int64
	err := tx.QueryRow(ctx, memoryInsertSQL, w.vals...).Scan(&rid)
	if errors.Is(err, pgx.ErrNoRows) {
		err = tx.QueryRow(ctx, memoryUpdateSQL, w.vals...).Scan(&rid)
		if errors.Is(err, pgx.ErrNoRows) {
			return imprint.Conflictf("memory %q belongs to another scope", w.m.ID)
		}
	}
	if err != nil {
		return err
	}
	for _, id := range w.supersede {
		var trid int64
		err := tx.QueryRow(ctx, memorySupersedeSQL, w.m.ID, id, w.m.Scope.Tenant, w.m.Scope.User, w.m.Scope.Agent).Scan(&trid)
		if errors.Is(err, pgx.ErrNoRows) {
			return imprint.Conflictf("memory %q is already superseded or not in scope", id)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// noteMemoryVectors tells the vector index about the vectors of ws, and
// the table's growth about their rows.
func (db *DB) noteMemoryVectors(ctx context.Context, ws []memoryWrite) {
	db.grew("memories", len(ws))
	for _, w := range ws {
		if len(w.m.Vec) > 0 {
			db.noteVectors(ctx, "memories", w.m.Embedder, len(w.m.Vec), "vec")
		}
	}
}

// GetMemory returns the memory (live or superseded), or ErrNotFound when it
// is not in scope.
func (db *DB) GetMemory(ctx context.Context, scope imprint.Scope, id string) (imprint.Memory, error) {
	if err := validScope(scope); err != nil {
		return imprint.Memory{}, err
	}
	m, err := scanMemory(db.pool.QueryRow(ctx, `SELECT `+memoryCols+` FROM memories m
		WHERE m.id = $1 AND m.tenant = $2 AND m.user_id = $3 AND m.agent = $4`, id, scope.Tenant, scope.User, scope.Agent))
	if errors.Is(err, pgx.ErrNoRows) {
		return m, imprint.NotFoundf("memory %q not found", id)
	}
	return m, dbErr("get memory", err)
}

// ListMemories returns the scope's memories newest first by UpdatedAt;
// superseded ones only with f.AllVersions. Limit 0 means 100.
func (db *DB) ListMemories(ctx context.Context, scope imprint.Scope, f imprint.MemoryFilter) ([]imprint.Memory, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	var a args
	q := `SELECT ` + memoryCols + ` FROM memories m WHERE ` + a.scope("m", scope)
	if f.SessionID != "" {
		q += ` AND m.session_id = ` + a.add(f.SessionID)
	}
	q += a.workspace("m", f.Workspace, f.IncludeGlobal)
	switch f.Type {
	case "":
	case imprint.MemoryInstruction:
		// A literal, so the planner can use memories_instructions.
		q += ` AND m.type = 'instruction'`
	default:
		q += ` AND m.type = ` + a.add(string(f.Type))
	}
	if !f.AllVersions {
		q += memoryLive
	}
	q += ` ORDER BY m.updated_at DESC, m.rid DESC LIMIT ` + a.add(listLimit(f.Limit))
	rows, err := db.pool.Query(ctx, q, a...)
	return collectMemories("list memories", rows, err)
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
	rows, err := db.pool.Query(ctx, `SELECT `+memoryCols+` FROM memories m
		WHERE m.tenant = $1 AND m.user_id = $2 AND m.agent = $3 AND m.content_hash = $4`+memoryLive+`
		ORDER BY m.rid`, scope.Tenant, scope.User, scope.Agent, hash)
	return collectMemories("find memory by hash", rows, err)
}

// MemoryHistory returns the versions id supersedes, transitively, newest
// first. ErrNotFound when id is not in scope.
func (db *DB) MemoryHistory(ctx context.Context, scope imprint.Scope, id string) ([]imprint.Memory, error) {
	if _, err := db.GetMemory(ctx, scope, id); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `WITH RECURSIVE older(id) AS (
			SELECT id FROM memories WHERE superseded_by = $1 AND tenant = $2 AND user_id = $3 AND agent = $4
			UNION
			SELECT m.id FROM memories m JOIN older o ON m.superseded_by = o.id
		)
		SELECT `+memoryCols+` FROM memories m JOIN older o ON o.id = m.id
		WHERE m.tenant = $2 AND m.user_id = $3 AND m.agent = $4
		ORDER BY m.updated_at DESC, m.version DESC, m.rid DESC`, id, scope.Tenant, scope.User, scope.Agent)
	return collectMemories("memory history", rows, err)
}

// CountMemories counts the scope's live memories.
func (db *DB) CountMemories(ctx context.Context, scope imprint.Scope) (int, error) {
	if err := validScope(scope); err != nil {
		return 0, err
	}
	var n int
	err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM memories WHERE tenant = $1 AND user_id = $2 AND agent = $3
		AND superseded_by IS NULL AND forgotten_at IS NULL`, scopeArgs(scope)...).Scan(&n)
	return n, dbErr("count memories", err)
}

// HasLiveMemoryHash reports whether a live memory of the scope has the
// content hash, without reading the memories.
func (db *DB) HasLiveMemoryHash(ctx context.Context, scope imprint.Scope, hash string) (bool, error) {
	if err := validScope(scope); err != nil {
		return false, err
	}
	if hash == "" {
		return false, nil
	}
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM memories WHERE tenant = $1 AND user_id = $2 AND agent = $3
		AND content_hash = $4 AND superseded_by IS NULL AND forgotten_at IS NULL)`, scope.Tenant, scope.User, scope.Agent, hash).Scan(&ok)
	return ok, dbErr("has live memory hash", err)
}

var _ imprint.LiveHashLister = (*DB)(nil)

// SupportsLiveHashes implements imprint.LiveHashLister: always true.
func (db *DB) SupportsLiveHashes() bool { return true }

// LiveMemoryHashes implements imprint.LiveHashLister: HasLiveMemoryHash
// of every hash, with the workspaces of the memories that have it, in one
// statement.
func (db *DB) LiveMemoryHashes(ctx context.Context, scope imprint.Scope, hashes []string) (map[string][]string, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	if len(hashes) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT DISTINCT content_hash, workspace FROM memories WHERE tenant = $1 AND user_id = $2 AND agent = $3
		AND content_hash = ANY($4) AND superseded_by IS NULL AND forgotten_at IS NULL`, scope.Tenant, scope.User, scope.Agent, hashes)
	if err != nil {
		return nil, dbErr("live memory hashes", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h, ws string
		if err := rows.Scan(&h, &ws); err != nil {
			return nil, dbErr("live memory hashes", err)
		}
		out[h] = append(out[h], ws)
	}
	return out, dbErr("live memory hashes", rows.Err())
}

// UnembeddedMessages returns up to limit messages of the scope without a
// vector, oldest first.
func (db *DB) UnembeddedMessages(ctx context.Context, scope imprint.Scope, limit int) ([]imprint.Message, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+messageCols+` FROM messages WHERE tenant = $1 AND user_id = $2 AND agent = $3
		AND vec IS NULL ORDER BY seq LIMIT $4`, scope.Tenant, scope.User, scope.Agent, imprint.RetryLimit(limit))
	return collectMessages("unembedded messages", rows, err)
}

// UnembeddedMemories returns up to limit live memories of the scope without
// a vector, oldest first.
func (db *DB) UnembeddedMemories(ctx context.Context, scope imprint.Scope, limit int) ([]imprint.Memory, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+memoryCols+` FROM memories m WHERE m.tenant = $1 AND m.user_id = $2
		AND m.agent = $3`+memoryLive+` AND m.vec IS NULL ORDER BY m.rid LIMIT $4`,
		scope.Tenant, scope.User, scope.Agent, imprint.RetryLimit(limit))
	return collectMemories("unembedded memories", rows, err)
}

// UnembeddedTraces returns up to limit traces of the scope with neither
// vector, oldest first.
func (db *DB) UnembeddedTraces(ctx context.Context, scope imprint.Scope, limit int) ([]imprint.Trace, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+traceCols+` FROM traces t WHERE t.tenant = $1 AND t.user_id = $2
		AND t.agent = $3 AND t.vec_summary IS NULL AND t.vec_action IS NULL ORDER BY t.rid LIMIT $4`,
		scope.Tenant, scope.User, scope.Agent, imprint.RetryLimit(limit))
	return collectTraces("unembedded traces", rows, err)
}

// SetMemoryVector stores vec for the memory when it has none.
func (db *DB) SetMemoryVector(ctx context.Context, scope imprint.Scope, id string, vec []float32, embedder string) error {
	if err := validScope(scope); err != nil {
		return err
	}
	if strings.TrimSpace(embedder) == "" {
		return imprint.Invalidf("embedder is required")
	}
	if len(vec) == 0 {
		return nil
	}
	_, err := db.pool.Exec(ctx, `UPDATE memories SET vec = $1, embedder = $2, dim = $3
		WHERE id = $4 AND tenant = $5 AND user_id = $6 AND agent = $7 AND vec IS NULL`,
		vec, embedder, len(vec), id, scope.Tenant, scope.User, scope.Agent)
	if err == nil {
		db.noteVectors(ctx, "memories", embedder, len(vec), "vec")
	}
	return dbErr("set memory vector", err)
}

// SetTraceVectors stores the summary and action vectors of a trace that
// has neither.
func (db *DB) SetTraceVectors(ctx context.Context, scope imprint.Scope, id string, summary, action []float32, embedder string) error {
	if err := validScope(scope); err != nil {
		return err
	}
	if strings.TrimSpace(embedder) == "" {
		return imprint.Invalidf("embedder is required")
	}
	if len(summary) == 0 && len(action) == 0 {
		return nil
	}
	if len(summary) > 0 && len(action) > 0 && len(summary) != len(action) {
		return imprint.Invalidf("trace %s: summary and action vectors differ in dimension (%d, %d)", id, len(summary), len(action))
	}
	_, err := db.pool.Exec(ctx, `UPDATE traces SET vec_summary = $1, vec_action = $2, embedder = $3, dim = $4
		WHERE id = $5 AND tenant = $6 AND user_id = $7 AND agent = $8 AND vec_summary IS NULL AND vec_action IS NULL`,
		vecArg(summary), vecArg(action), embedder, max(len(summary), len(action)), id, scope.Tenant, scope.User, scope.Agent)
	if err == nil {
		db.noteVectors(ctx, "traces", embedder, max(len(summary), len(action)), vecCols[imprint.KindTrace]...)
	}
	return dbErr("set trace vectors", err)
}

// listLimit turns a filter's Limit into SQL's: 0 is 100, a negative one
// (imprint.NoLimit) is no limit (LIMIT NULL).
func listLimit(n int) any {
	switch {
	case n == 0:
		return 100
	case n < 0:
		return nil
	}
	return n
}
