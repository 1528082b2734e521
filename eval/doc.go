// Package eval measures imprint's retrieval against a benchmark with known
// answers. For LoCoMo it asks every question of categories 1–4 of a file
// through message, memory and all-kinds search and through the recall
// block, and reports recall@1/5/10 of the evidence turns per category and
// overall, with query latency, beside a plain BM25 baseline over the same
// turns (an in-memory SQLite FTS5 table, stop words removed).
//
// The package does not import anything itself: the caller (imprint eval)
// imports the file into a fresh store the way imprint import does and
// hands the store and its searchers over as a System.
package eval
