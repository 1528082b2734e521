// Package curate is memory management by hand: remember, show, edit,
// forget, purge and bulk forget (imprint.Memories), the export, restore
// and rebuild of a data dir, and the migration of a store into another
// (Migrate: imprint migrate). Memories added or corrected by hand go through
// extraction's dedup and write path (extract.Runner.Remember and Revise);
// every change is logged to the records log before the store; a purge
// removes a memory's versions from the store and their lines from the
// JSONL shards.
package curate
