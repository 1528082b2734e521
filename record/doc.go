// Package record is imprint's L0 recorder: it takes the user and assistant
// messages of a session, strips memory context that imprint or a host
// injected into prompts, removes control characters, redacts secrets, skips
// empty and already recorded messages, embeds the rest in one call, stores
// them in one transaction, appends them to the conversations day shards
// (<data_dir>/conversations/YYYY-MM-DD.jsonl) and, every N user rounds,
// marks the session due for extraction.
//
// L0 keeps everything that is non-empty after sanitizing; the strict
// filtering (the quality gate) happens at extraction.
package record
