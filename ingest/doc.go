// Package ingest is how transcripts and live conversations become memory:
// the import pipeline (sources found and read ahead, messages recorded a
// chunk at a time, episodes captured and sessions extracted alongside),
// the durable job handlers of capture, extraction and embedding retry,
// the enqueueing of what a recording made due, and the dry-run estimate
// of what an import would send to an LLM.
//
// It sits with the pipelines: it uses capture, extract, record and
// importer, and is handed its adapters (store, LLM, embedder, job queue)
// as root interfaces by package node. The commands (imprint import,
// imprint serve), the HTTP API and the MCP server all go through it.
package ingest
