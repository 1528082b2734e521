package main

import (
	"context"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/mcp"
	"github.com/imprint-dev/imprint/search"
)

func newMCPCmd(a *App) *cobra.Command {
	var server, token string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve imprint to an MCP host (Claude Desktop, Claude Code, Cursor, …) on stdio",
		Long: "mcp speaks the Model Context Protocol on stdin and stdout for one host: tools (search,\n" +
			"recall, remember, forget, list_memories, get_memory, record_messages, end_session,\n" +
			"list_traces) and resources (imprint://memory/{id}, imprint://trace/{id},\n" +
			"imprint://instructions) in the scope of --tenant, --user and --agent. Stdout carries only\n" +
			"the protocol; logs go to stderr. It uses the local database, or a running imprint serve:\n" +
			"--server, else the one holding the data dir (end_session then queues the extraction\n" +
			"there; locally it extracts before answering). imprint serve offers the same server over\n" +
			"HTTP at /mcp. See docs/mcp.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			d, err := a.mcpDeps(ctx, cmd, server, token)
			if err != nil {
				return err
			}
			srv, err := mcp.New(d, mcp.Config{Scope: a.Scope(), Version: version})
			if err != nil {
				return err
			}
			a.Logger.Info("mcp serving on stdio", "scope", a.Scope().String())
			return srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(a.Stdin), Writer: nopWriteCloser{a.Stdout}})
		},
	}
	addServerFlags(cmd, &server, &token)
	return cmd
}

// version is the binary's version reported to MCP hosts.
const version = "dev"

// mcpDeps wires the MCP server to a running service (--server, else the
// imprint serve holding the data dir) or to the local store, where
// end_session extracts in process.
func (a *App) mcpDeps(ctx context.Context, cmd *cobra.Command, server, token string) (mcp.Deps, error) {
	c, err := a.serviceClient(cmd, server, token)
	if err != nil {
		return mcp.Deps{}, err
	}
	if c != nil {
		return mcp.Deps{Store: clientReader{c}, Search: c, Recall: c, Recorder: c, Sessions: mcp.Queued(c),
			Memories: httpapi.ClientMemories{C: c}, Logger: a.Logger}, nil
	}
	st, err := a.Store(ctx)
	if err != nil {
		return mcp.Deps{}, err
	}
	searcher, err := a.searcher(ctx)
	if err != nil {
		return mcp.Deps{}, err
	}
	rec, err := a.l0Recorder(ctx)
	if err != nil {
		return mcp.Deps{}, err
	}
	ext, err := a.extractRunner(ctx)
	if err != nil {
		return mcp.Deps{}, err
	}
	end := func(ctx context.Context, scope imprint.Scope, sessionID string) (mcp.SessionEnd, error) {
		n, err := st.CountPending(ctx, scope, sessionID)
		if err != nil {
			return mcp.SessionEnd{}, err
		}
		res := mcp.SessionEnd{SessionID: sessionID, PendingMessages: n, Extracted: true}
		err = ext.ExtractPending(ctx, scope, sessionID, func(r extract.Result) { res.MemoriesStored += r.StoredCount })
		return res, err
	}
	mems, err := a.localMemories(ctx, ext)
	if err != nil {
		return mcp.Deps{}, err
	}
	return mcp.Deps{Store: st, Search: searcher, Recorder: rec, Sessions: mcp.EnderFunc(end), Memories: mems, Logger: a.Logger,
		Recall: search.Recaller{Searcher: searcher, Memories: st, Traces: st, Messages: st}}, nil
}

// nopWriteCloser is stdout for the MCP transport, which closes its writer
// when the session ends: the process's stdout stays open.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// clientReader is mcp.Reader over a running service's HTTP API.
type clientReader struct{ c *httpapi.Client }

func (r clientReader) GetMemory(ctx context.Context, scope imprint.Scope, id string) (imprint.Memory, error) {
	m, err := r.c.Memory(ctx, scope, id)
	return m.Memory, err
}

func (r clientReader) MemoryHistory(ctx context.Context, scope imprint.Scope, id string) ([]imprint.Memory, error) {
	m, err := r.c.Memory(ctx, scope, id)
	return m.History, err
}

func (r clientReader) ListMemories(ctx context.Context, scope imprint.Scope, f imprint.MemoryFilter) ([]imprint.Memory, error) {
	return r.c.Memories(ctx, scope, f)
}

func (r clientReader) GetTrace(ctx context.Context, scope imprint.Scope, id string) (imprint.Trace, error) {
	return r.c.Trace(ctx, scope, id)
}

func (r clientReader) GetEpisode(ctx context.Context, scope imprint.Scope, id string) (imprint.Episode, error) {
	return r.c.Episode(ctx, scope, id)
}

func (r clientReader) ListTraces(ctx context.Context, scope imprint.Scope, f imprint.TraceFilter) ([]imprint.Trace, error) {
	return r.c.Traces(ctx, scope, f)
}
