package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/imprint-dev/imprint"
)

// ExtractPending asks the service to extract sessionID, or every session
// of scope with messages pending when sessionID is "", and calls fn with
// each window's result as ExtractSession does, session after session,
// following one event stream. ErrInvalid naming the session when the
// service does not know it; an error of fn ends it.
func (c *Client) ExtractPending(ctx context.Context, scope imprint.Scope, sessionID string, fn func(result json.RawMessage, success bool) error) error {
	sessions := []string{sessionID}
	if sessionID == "" {
		var err error
		if sessions, err = c.PendingSessions(ctx, scope); err != nil {
			return err
		}
	}
	if len(sessions) == 0 {
		return nil
	}
	s, err := c.OpenEvents(ctx, scope)
	if err != nil {
		return fmt.Errorf("follow extraction: %w", err)
	}
	defer s.Close()
	for _, sid := range sessions {
		err := c.ExtractSession(ctx, s, scope, sid, fn)
		if errors.Is(err, imprint.ErrNotFound) {
			return imprint.Invalidf("session %q: no such session in scope %s", sid, scope)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// HookClient is what the Claude Code hook needs of a running service
// (ingest.HookAPI), over C.
type HookClient struct{ C *Client }

// RecordMessages records msgs in the session (POST /v1/messages).
func (h HookClient) RecordMessages(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) error {
	_, err := h.C.Record(ctx, scope, sessionID, msgs)
	return err
}

// SubmitEpisode submits a finished episode for capture (POST /v1/episodes).
func (h HookClient) SubmitEpisode(ctx context.Context, ep imprint.Episode) error {
	_, err := h.C.SubmitEpisode(ctx, ep)
	return err
}

// EndSession ends the session: everything pending is extracted now.
func (h HookClient) EndSession(ctx context.Context, scope imprint.Scope, sessionID string) error {
	_, _, err := h.C.End(ctx, scope, sessionID)
	return err
}

// Recall returns the context block of q ("" when there is nothing).
func (h HookClient) Recall(ctx context.Context, q imprint.RecallQuery) (string, error) {
	res, err := h.C.Recall(ctx, q)
	return res.Context, err
}

// NewClient returns a client of the imprint serve at server (a URL like
// http://127.0.0.1:8420) sending token, whose requests give up after
// timeout. ErrInvalid naming server when it is not an http(s) URL.
func NewClient(server, token string, timeout time.Duration) (*Client, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, imprint.Invalidf("--server %q: want a URL like http://127.0.0.1:8420", server)
	}
	return &Client{BaseURL: strings.TrimRight(server, "/"), Token: token, HTTP: &http.Client{Timeout: timeout}}, nil
}
