// Package shard appends JSON lines to day-sharded files
// (<dir>/YYYY-MM-DD.jsonl, by the UTC date of each line's time). The files
// are imprint's append-only log: L0 conversations and every change to an L1
// memory, so the store can be rebuilt from them. A Writer is the
// imprint.RecordLog of its folder; its Journal keeps the entries of work in
// flight (<dir>/inflight/) that tell what a stopped process was writing.
package shard
