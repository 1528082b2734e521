// Package viewer is the web viewer of imprint serve: server-rendered
// html/template pages (overview, memories, episodes and traces, sessions,
// search, live events) and a little plain JavaScript, all embedded in the
// binary. It is an adapter: it reads through the root interfaces the
// binary hands it, and the HTTP API mounts it behind its Host and origin
// checks and tells it who the caller is (imprint.CallerOf).
package viewer
