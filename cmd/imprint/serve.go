package main

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/node"
)

func newServeCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT]",
		Short: "Run the HTTP API and the background workers (capture, extraction)",
		Long: "serve listens on server.addr (default 127.0.0.1:8420) and runs the durable background\n" +
			"jobs: capture of finalized episodes and extraction of sessions (after\n" +
			"extraction.every_n_rounds user rounds, extraction.idle of silence, or a session end).\n" +
			"A non-loopback address needs server.api_token or an API key (imprint keys). SIGINT or\n" +
			"SIGTERM stop it gracefully: no new requests, jobs in flight handed back for the next\n" +
			"start, exit 0. It prints the address it listens on to stderr.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.node.Serve(cmd.Context(), node.ServeHooks{
				Listening: func(addr net.Addr) {
					if w := a.Config.HostsWarning(); w != "" {
						fmt.Fprintf(a.Stderr, "imprint: warning: %s\n", w)
					}
					fmt.Fprintf(a.Stderr, "imprint: listening on http://%s\n", addr)
				},
				Stopping: func() { fmt.Fprintln(a.Stderr, "imprint: stopping") },
			})
		},
	}
	a.configFlag(cmd, "addr", "server.addr", "address to listen on, e.g. 127.0.0.1:8420 or :8420")
	return cmd
}
