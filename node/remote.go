package node

import (
	"time"

	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/ingest"
)

// This file finds the running imprint serve a command talks to instead of
// opening the data dir.

// Client returns a client of the imprint serve at url with token (the
// caller's: --token, IMPRINT_API_TOKEN or server.api_token), waiting for
// an answer a little longer than the service's own request timeout.
func (n *Node) Client(url, token string) (*httpapi.Client, error) {
	return httpapi.NewClient(url, token, n.Config.Server.RequestTimeout+5*time.Second)
}

// HoldingService returns a client of the imprint serve that holds the data
// dir (whose unauthorized answers then say so and how to give its token),
// or nil when none does: the work then runs on the data dir itself.
func (n *Node) HoldingService(token string) (*httpapi.Client, error) {
	url, err := ingest.RunningService(n.Config.DataDir)
	if err != nil || url == "" {
		return nil, err
	}
	c, err := n.Client(url, token)
	if err != nil {
		return nil, err
	}
	c.Found = "the imprint serve that holds the data dir"
	n.Logger.Info("the data dir is held by imprint serve; using it", "url", url)
	return c, nil
}

// HookClient is the client of the Claude Code hook: c (--server) when
// given, else the configured server.addr on loopback.
func (n *Node) HookClient(c *httpapi.Client, token string) (ingest.HookAPI, error) {
	if c != nil {
		return httpapi.HookClient{C: c}, nil
	}
	url, err := n.Config.ServerURL()
	if err != nil {
		return nil, err
	}
	if c, err = n.Client(url, token); err != nil {
		return nil, err
	}
	return httpapi.HookClient{C: c}, nil
}
