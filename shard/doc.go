// Package shard appends JSON lines to day-sharded files
// (<dir>/YYYY-MM-DD.jsonl, by the UTC date of each line's time). The files
// are imprint's append-only log: L0 conversations and every change to an L1
// memory, so the store can be rebuilt from them.
package shard
