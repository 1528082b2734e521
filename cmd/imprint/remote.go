package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/ingest"
)

// This file is the --server path of the commands that read or write: they
// talk to a running imprint serve through httpapi.Client instead of
// opening the database, and print what the local path prints.

// remoteWait bounds how long capture and extract --server wait for the
// service to finish the work they asked for.
const remoteWait = 10 * time.Minute

// addServerFlags adds --server and --token to cmd.
func addServerFlags(cmd *cobra.Command, server, token *string) {
	cmd.Flags().StringVar(server, "server", "", "URL of a running imprint serve to use instead of the local database (env IMPRINT_SERVER)")
	cmd.Flags().StringVar(token, "token", "", "API token for --server (env IMPRINT_API_TOKEN, else server.api_token)")
}

// remoteClient returns a client for --server (else IMPRINT_SERVER), or nil
// when neither is set: the command then runs locally.
func (a *App) remoteClient(cmd *cobra.Command, server, token string) (*httpapi.Client, error) {
	if !cmd.Flags().Changed("server") {
		server = strings.TrimSpace(a.Getenv("IMPRINT_SERVER"))
	}
	if server == "" {
		return nil, nil
	}
	return a.newClient(cmd, server, token)
}

// serviceClient returns a client for --server (else IMPRINT_SERVER), else
// for the imprint serve holding the data dir (whose unauthorized answers
// then say so and how to give its token), else nil: the command then runs
// on the data dir itself.
func (a *App) serviceClient(cmd *cobra.Command, server, token string) (*httpapi.Client, error) {
	c, err := a.remoteClient(cmd, server, token)
	if c != nil || err != nil {
		return c, err
	}
	url, err := ingest.RunningService(a.Config.DataDir)
	if err != nil || url == "" {
		return nil, err
	}
	if c, err = a.newClient(cmd, url, token); err != nil {
		return nil, err
	}
	c.Found = "the imprint serve that holds the data dir"
	a.Logger.Info("the data dir is held by imprint serve; using it", "url", url)
	return c, nil
}

// newClient returns a client for server, with the token from --token, else
// IMPRINT_API_TOKEN, else server.api_token.
func (a *App) newClient(cmd *cobra.Command, server, token string) (*httpapi.Client, error) {
	if !cmd.Flags().Changed("token") {
		token = strings.TrimSpace(a.Getenv("IMPRINT_API_TOKEN"))
		if token == "" {
			token = a.Config.Server.APIToken
		}
	}
	return httpapi.NewClient(server, token, a.Config.Server.RequestTimeout+5*time.Second)
}

// hookClient is the client of the Claude Code hook: --server, else
// IMPRINT_SERVER, else the configured server.addr on loopback.
func (a *App) hookClient(cmd *cobra.Command, server, token string) (ingest.HookAPI, error) {
	cl, err := a.remoteClient(cmd, server, token)
	if err != nil || cl != nil {
		return httpapi.HookClient{C: cl}, err
	}
	url, err := a.Config.ServerURL()
	if err != nil {
		return nil, err
	}
	cl, err = a.newClient(cmd, url, token)
	if err != nil {
		return nil, err
	}
	return httpapi.HookClient{C: cl}, nil
}

// remoteCapture submits the episodes (already prepared, ids set) to the
// service and prints each capture result as the service reports it.
func (a *App) remoteCapture(ctx context.Context, c *httpapi.Client, eps []imprint.Episode) error {
	ctx, cancel := context.WithTimeout(ctx, remoteWait)
	defer cancel()
	return c.CaptureEpisodes(ctx, eps, func(data json.RawMessage) error {
		var res capture.Result
		if err := json.Unmarshal(data, &res); err != nil {
			return fmt.Errorf("capture result: %w: %v", imprint.ErrUnavailable, err)
		}
		return a.Print(res, res.WriteText)
	})
}

// remoteExtract asks the service to extract the session (every pending
// one when "") and prints each window's result as the service reports it.
// A failed window is printed and exits 1, as locally.
func (a *App) remoteExtract(ctx context.Context, c *httpapi.Client, session string) error {
	ctx, cancel := context.WithTimeout(ctx, remoteWait)
	defer cancel()
	var windows, stored int
	err := c.ExtractPending(ctx, a.Scope(), session, func(data json.RawMessage, success bool) error {
		var res extract.Result
		if err := json.Unmarshal(data, &res); err != nil {
			return fmt.Errorf("extraction result: %w: %v", imprint.ErrUnavailable, err)
		}
		windows++
		stored += res.StoredCount
		if err := a.Print(res, res.WriteText); err != nil {
			return err
		}
		if !success {
			return withExitCode(exitFailure, fmt.Errorf("extract session %s: a window failed on the server; its messages stay pending and the service retries them", res.SessionID))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !a.JSON {
		a.Printf("%d windows, %d memories stored or updated\n", windows, stored)
	}
	return nil
}
