package main

import (
	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/node"
)

// This file is the --server path of the commands that read or write: they
// talk to a running imprint serve through its HTTP API (node.Access)
// instead of opening the database, and print what the local path prints.

// addServerFlags adds --server and --token to cmd.
func addServerFlags(cmd *cobra.Command) *cobra.Command {
	cmd.Flags().String("server", "", "URL of a running imprint serve to use instead of the local database (env IMPRINT_SERVER)")
	cmd.Flags().String("token", "", "API token for --server (env IMPRINT_API_TOKEN, else server.api_token)")
	return cmd
}

// remote returns a client for --server (else IMPRINT_SERVER), with the
// token of --token, else IMPRINT_API_TOKEN, else server.api_token; nil when
// no server is named: the command then runs locally.
func (a *App) remote(cmd *cobra.Command) (*httpapi.Client, string, error) {
	server, _ := cmd.Flags().GetString("server")
	token, _ := cmd.Flags().GetString("token")
	token = a.pick(cmd, "token", token, "IMPRINT_API_TOKEN", a.Config.Server.APIToken)
	if server = a.pick(cmd, "server", server, "IMPRINT_SERVER", ""); server == "" {
		return nil, token, nil
	}
	c, err := a.node.Client(server, token)
	return c, token, err
}

// access returns where cmd's work runs: --server (or IMPRINT_SERVER), else
// with followService the imprint serve holding the data dir (so that its
// shards and indexes stay its own), else the data dir itself.
func (a *App) access(cmd *cobra.Command, followService bool) (*node.Access, error) {
	c, token, err := a.remote(cmd)
	if err != nil {
		return nil, err
	}
	if c == nil && followService {
		if c, err = a.node.HoldingService(token); err != nil {
			return nil, err
		}
	}
	return a.node.Access(c), nil
}
