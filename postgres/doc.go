// Package postgres is imprint's PostgreSQL store: every method of the
// root Store seam and of imprint serve's ServiceStore, and the optional
// capabilities (BatchAppender, CaptureSaver, MemoryBatchWriter,
// LiveHashLister, TermCounter, Browser and a
// JobEngineHost of pgx.Tx, for River), on github.com/jackc/pgx/v5
// (pgxpool), with numbered embedded migrations. Several processes may
// share one database: writes that must not interleave take row locks, and
// migrations an advisory lock. A new database gets its whole schema from
// schema.sql (the migrations up to the one it names), run as two halves
// on two connections at once (initschema.go).
//
// Keyword search indexes the words imprint's keyword package makes as a
// tsvector (GIN) and CJK runs with pg_trgm, and answers within the scope
// in the query. Vectors are kept in a float4[] column and searched by an
// exact, scoped cosine scan; see docs/postgres.md.
package postgres
