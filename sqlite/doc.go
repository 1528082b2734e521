// Package sqlite is imprint's embedded store: one SQLite file (pure Go
// driver modernc.org/sqlite) holding sessions, L0 messages, episodes,
// traces, memories and the LLM call log, with FTS5 keyword indexes (a
// porter/unicode61 word index that also holds CJK bigrams, plus a trigram
// index of CJK runs) and float32 vector BLOBs searched by an in-memory
// exact top-k scan.
//
// Writes go through a single connection (BEGIN IMMEDIATE), reads through a
// separate pool, and the file runs in WAL mode, so readers never wait for
// the writer and concurrent writers queue instead of failing with
// SQLITE_BUSY. The schema lives in numbered, embedded migrations.
package sqlite
