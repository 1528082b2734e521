// Package mcp is imprint's Model Context Protocol server: the tools
// (search, recall, remember, forget, list_memories, get_memory,
// record_messages, end_session, list_traces) and resources
// (imprint://memory/{id}, imprint://trace/{id}, imprint://instructions) an
// MCP host attaches, on the official Go SDK.
//
// It is an adapter: it reaches the store, search, recall, the recorder and
// memory management only through root interfaces the binary injects
// (Deps), as the HTTP API does. The same Server runs on stdio (imprint mcp,
// one session in the scope of the command's flags) and as the streamable
// HTTP handler the HTTP API mounts at /mcp behind its perimeter and
// authentication, each session bound to the caller that opened it
// (imprint.Caller). When the client offers roots, the first root's folder
// is the session's workspace.
package mcp
