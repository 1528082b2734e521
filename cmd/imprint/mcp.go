package main

import (
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

func newMCPCmd(a *App) *cobra.Command {
	return addServerFlags(&cobra.Command{
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
			acc, err := a.access(cmd, true)
			if err != nil {
				return err
			}
			srv, err := acc.NewMCP(cmd.Context(), a.Scope())
			if err != nil {
				return err
			}
			a.Logger.Info("mcp serving on stdio", "scope", a.Scope().String())
			return srv.Run(cmd.Context(), &sdk.IOTransport{Reader: io.NopCloser(a.Stdin), Writer: nopWriteCloser{a.Stdout}})
		},
	})
}

// nopWriteCloser is stdout for the MCP transport, which closes its writer
// when the session ends: the process's stdout stays open.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
