package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
)

// The vector tier. Vectors always live in the records' plain real[]
// columns. With pgvector (0.8 or later) in the database, each (kind,
// embedder, dimension) also gets an HNSW cosine index over that column
// cast to vector(d) — the vector(d) column of the embedder, computed from
// the plain one, so it is never stored twice and adding the extension to
// a database later only builds the indexes. Searches then read the
// index's nearest rows within the scope with iterative scans (a scope
// filter still returns k results) and score them exactly; without
// pgvector they scan the scope's vectors exactly.

// vecTier is what the store knows of pgvector.
type vecTier struct {
	version string // pgvector's version; "" without it
	built   sync.Map
}

// detectVector finds pgvector, creating the extension when the server
// has it and the role may, and builds the HNSW indexes of the vectors
// already stored.
func (db *DB) detectVector(ctx context.Context) error {
	read := func() (string, error) {
		var v string
		err := db.pool.QueryRow(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'vector'`).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return "", nil
		}
		return v, err
	}
	v, err := read()
	if err != nil {
		return err
	}
	if v == "" {
		var avail bool
		if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`).Scan(&avail); err != nil {
			return err
		}
		if avail {
			// Another node may create it at the same moment, or the
			// role may not be allowed to: read again either way.
			_, _ = db.pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`)
			if v, err = read(); err != nil {
				return err
			}
		}
	}
	if v != "" && !iterativeScans(v) {
		v = "" // before 0.8 a scoped search could return fewer than k
	}
	db.vec.version = v
	if v == "" {
		return nil
	}
	for kind, cols := range vecCols {
		table := hitSources[kind].table
		for _, col := range cols {
			rows, err := db.pool.Query(ctx, `SELECT DISTINCT embedder, dim FROM `+table+` WHERE `+col+` IS NOT NULL`)
			if err != nil {
				return err
			}
			type ed struct {
				e string
				d int
			}
			var eds []ed
			for rows.Next() {
				var x ed
				if err := rows.Scan(&x.e, &x.d); err != nil {
					rows.Close()
					return err
				}
				eds = append(eds, x)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, x := range eds {
				if err := db.ensureHNSW(ctx, table, col, x.e, x.d); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// iterativeScans reports whether pgvector version v has iterative index
// scans (0.8.0 and later).
func iterativeScans(v string) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && (major > 0 || minor >= 8)
}

// SupportsVectorSearchDescription reports that VectorSearch says which
// vector search the store uses (imprint.VectorSearchDescriber).
func (db *DB) SupportsVectorSearchDescription() bool { return true }

// VectorSearch says how vectors are searched, for imprint doctor.
func (db *DB) VectorSearch() string {
	if db.vec.version == "" {
		return "vectors: exact scoped cosine scan (no pgvector 0.8+ in the database)"
	}
	return "vectors: pgvector " + db.vec.version + " HNSW cosine indexes with iterative scans"
}

// quoteLiteral is s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// hnswIndexName names the HNSW index of one column, embedder and
// dimension (within PostgreSQL's 63 bytes).
func hnswIndexName(table, col, embedder string, dim int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", embedder, dim)
	return fmt.Sprintf("%s_%s_hnsw_%016x", table, col, h.Sum64())
}

// ensureHNSW builds, once, the HNSW cosine index of col's vectors made by
// embedder with dim dimensions. Nodes building it at once wait for each
// other; the second finds it there.
func (db *DB) ensureHNSW(ctx context.Context, table, col, embedder string, dim int) error {
	name := hnswIndexName(table, col, embedder, dim)
	if _, ok := db.vec.built.Load(name); ok {
		return nil
	}
	if dim <= 0 || dim > 2000 {
		return nil // beyond HNSW's limit: the exact scan serves it
	}
	_, err := db.pool.Exec(ctx, `CREATE INDEX IF NOT EXISTS `+name+` ON `+table+` USING hnsw ((`+col+`::vector(`+
		strconv.Itoa(dim)+`)) vector_cosine_ops) WHERE embedder = `+quoteLiteral(embedder)+` AND dim = `+strconv.Itoa(dim))
	if err != nil && !isUnique(err) {
		return fmt.Errorf("build vector index %s: %w", name, err)
	}
	db.vec.built.Store(name, true)
	return nil
}

// noteVectors builds, after a write of vectors of embedder with dim
// dimensions into the columns of table, their HNSW indexes when they have
// none yet (nothing without pgvector, or once built). A failure is left
// for the next write or search to retry: the write itself succeeded.
func (db *DB) noteVectors(ctx context.Context, table, embedder string, dim int, cols ...string) {
	if db.vec.version == "" || embedder == "" || dim == 0 {
		return
	}
	for _, col := range cols {
		_ = db.ensureHNSW(ctx, table, col, embedder, dim)
	}
}

// searchHNSW reads, for each vector column, the nearest rows of sel (the
// scoped query of the hits, with args a) nearest to q.Vector through the
// column's HNSW index, with iterative scans so that the scope filter
// still leaves limit rows, and hands them to read, which scores them
// exactly.
func (db *DB) searchHNSW(ctx context.Context, q imprint.VectorQuery, table string, cols []string, sel string, a args,
	limit int, read func(pgx.Rows) error) error {
	dim := strconv.Itoa(len(q.Vector))
	for _, col := range cols {
		if err := db.ensureHNSW(ctx, table, col, q.Embedder, len(q.Vector)); err != nil {
			return err
		}
	}
	// Relaxed order emits candidates roughly nearest first; reading 4k of
	// them and scoring them exactly gives the k nearest in order.
	cands := min(imprint.MaxSearchLimit, max(40, 4*limit))
	return db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
			set_config('hnsw.ef_search', $1, true)`, strconv.Itoa(min(1000, cands))); err != nil {
			return err
		}
		for _, col := range cols {
			ca := append(args{}, a...)
			qv := ca.add(q.Vector)
			rows, err := tx.Query(ctx, sel+` AND x.`+col+` IS NOT NULL ORDER BY (x.`+col+`::vector(`+dim+`)) <=> (`+qv+
				`::real[])::vector(`+dim+`) LIMIT `+ca.add(cands), ca...)
			if err != nil {
				return err
			}
			if err := read(rows); err != nil {
				return err
			}
		}
		return nil
	})
}
