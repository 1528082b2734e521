package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/search"
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

// newClient returns a client for server, with the token from --token, else
// IMPRINT_API_TOKEN, else server.api_token.
func (a *App) newClient(cmd *cobra.Command, server, token string) (*httpapi.Client, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, imprint.Invalidf("--server %q: want a URL like http://127.0.0.1:8420", server)
	}
	if !cmd.Flags().Changed("token") {
		token = strings.TrimSpace(a.Getenv("IMPRINT_API_TOKEN"))
		if token == "" {
			token = a.Config.Server.APIToken
		}
	}
	timeout := a.Config.Server.RequestTimeout + 5*time.Second
	return &httpapi.Client{BaseURL: strings.TrimRight(server, "/"), Token: token, HTTP: &http.Client{Timeout: timeout}}, nil
}

// hookClient is the client of the Claude Code hook: --server, else
// IMPRINT_SERVER, else the configured server.addr on loopback.
func (a *App) hookClient(cmd *cobra.Command, server, token string) (ingest.HookAPI, error) {
	cl, err := a.remoteClient(cmd, server, token)
	if err != nil || cl != nil {
		return clientHookAPI{cl}, err
	}
	host, port, err := net.SplitHostPort(a.Config.Server.Addr)
	if err != nil {
		return nil, imprint.Invalidf("config server.addr %q: %v", a.Config.Server.Addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	cl, err = a.newClient(cmd, "http://"+net.JoinHostPort(host, port), token)
	if err != nil {
		return nil, err
	}
	return clientHookAPI{cl}, nil
}

// clientHookAPI is the hook's view of httpapi.Client.
type clientHookAPI struct{ c *httpapi.Client }

// RecordMessages implements ingest.HookAPI.
func (h clientHookAPI) RecordMessages(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) error {
	_, err := h.c.Record(ctx, scope, sessionID, msgs)
	return err
}

// SubmitEpisode implements ingest.HookAPI.
func (h clientHookAPI) SubmitEpisode(ctx context.Context, ep imprint.Episode) error {
	_, err := h.c.SubmitEpisode(ctx, ep)
	return err
}

// EndSession implements ingest.HookAPI.
func (h clientHookAPI) EndSession(ctx context.Context, scope imprint.Scope, sessionID string) error {
	_, _, err := h.c.End(ctx, scope, sessionID)
	return err
}

// Recall implements ingest.HookAPI.
func (h clientHookAPI) Recall(ctx context.Context, scope imprint.Scope, query, sessionID string, budget int) (string, error) {
	res, err := h.c.Recall(ctx, search.RecallQuery{Scope: scope, Text: query, SessionID: sessionID, BudgetTokens: budget})
	return res.Context, err
}

// eventStream follows a server's event stream for one scope. Events
// published after open returns are seen. It owns the goroutine reading the
// stream: close stops it and waits for it.
type eventStream struct {
	events chan httpapi.Event
	errc   chan error
	cancel context.CancelFunc
	done   chan struct{}
}

// openEvents subscribes to the scope's events and returns once the server
// has registered the stream (its response headers arrived).
func openEvents(ctx context.Context, c *httpapi.Client, scope imprint.Scope) (*eventStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	ready := make(chan struct{})
	var once sync.Once
	ec := *c
	base := http.DefaultTransport
	if c.HTTP != nil && c.HTTP.Transport != nil {
		base = c.HTTP.Transport
	}
	// The stream is not bounded by the request timeout.
	ec.HTTP = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(r)
		if err == nil {
			once.Do(func() { close(ready) })
		}
		return resp, err
	})}
	s := &eventStream{events: make(chan httpapi.Event, 256), errc: make(chan error, 1), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		err := ec.Events(ctx, scope, func(e httpapi.Event) error {
			select {
			case s.events <- e:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err == nil {
			err = fmt.Errorf("the server closed the event stream: %w", imprint.ErrUnavailable)
		}
		s.errc <- err
	}()
	select {
	case <-ready:
		return s, nil
	case err := <-s.errc:
		s.close()
		return nil, err
	case <-ctx.Done():
		s.close()
		return nil, ctx.Err()
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// next returns the next event, or an error when the stream or ctx ends.
func (s *eventStream) next(ctx context.Context) (httpapi.Event, error) {
	select {
	case e := <-s.events:
		return e, nil
	case err := <-s.errc:
		s.errc <- err
		return httpapi.Event{}, err
	case <-ctx.Done():
		return httpapi.Event{}, fmt.Errorf("waiting for the server: %w", ctx.Err())
	}
}

func (s *eventStream) close() {
	s.cancel()
	<-s.done
}

// remoteCapture submits the episodes (already prepared, ids set) to the
// service and prints each capture result as the service reports it.
func (a *App) remoteCapture(ctx context.Context, c *httpapi.Client, eps []imprint.Episode) error {
	ctx, cancel := context.WithTimeout(ctx, remoteWait)
	defer cancel()
	streams := map[imprint.Scope]*eventStream{}
	defer func() {
		for _, s := range streams {
			s.close()
		}
	}()
	for _, ep := range eps {
		if streams[ep.Scope] != nil {
			continue
		}
		s, err := openEvents(ctx, c, ep.Scope)
		if err != nil {
			return fmt.Errorf("follow capture: %w", err)
		}
		streams[ep.Scope] = s
	}
	for _, ep := range eps {
		if _, err := c.SubmitEpisode(ctx, ep); err != nil {
			return fmt.Errorf("submit episode %s: %w", ep.ID, err)
		}
	}
	outcomes := map[string]captureOutcome{}
	for _, ep := range eps {
		res, err := waitCapture(ctx, streams[ep.Scope], ep.ID, outcomes)
		if err != nil {
			return err
		}
		if err := a.printCapture(res); err != nil {
			return err
		}
	}
	return nil
}

// captureOutcome is what the service reported for one episode.
type captureOutcome struct {
	res capture.Result
	err error
}

// waitCapture reads events until the capture of episodeID is done or
// failed, keeping the outcomes of other episodes in seen.
func waitCapture(ctx context.Context, s *eventStream, episodeID string, seen map[string]captureOutcome) (capture.Result, error) {
	for {
		if o, ok := seen[episodeID]; ok {
			return o.res, o.err
		}
		e, err := s.next(ctx)
		if err != nil {
			return capture.Result{}, fmt.Errorf("capture of %s: %w", episodeID, err)
		}
		switch e.Name {
		case capture.EventDone:
			var d struct {
				Result capture.Result `json:"result"`
			}
			if json.Unmarshal(e.Data, &d) == nil {
				seen[d.Result.EpisodeID] = captureOutcome{res: d.Result}
			}
		case capture.EventFailed:
			var d struct {
				EpisodeID string `json:"episode_id"`
				Error     struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(e.Data, &d) == nil {
				seen[d.EpisodeID] = captureOutcome{err: fmt.Errorf("capture of %s failed on the server (%s): %s", d.EpisodeID, d.Error.Code, d.Error.Message)}
			}
		}
	}
}

// remoteExtract asks the service to extract the sessions and prints each
// window's result as the service reports it, until the windows have
// consumed the messages that were pending when it asked. A
// failed window is printed and exits 1, as locally.
func (a *App) remoteExtract(ctx context.Context, c *httpapi.Client, session string) error {
	ctx, cancel := context.WithTimeout(ctx, remoteWait)
	defer cancel()
	scope := a.Scope()
	var sessions []string
	if session != "" {
		sessions = []string{session}
	} else {
		st, err := c.Status(ctx, scope)
		if err != nil {
			return err
		}
		for _, s := range st.Sessions {
			if s.PendingMessages > 0 {
				sessions = append(sessions, s.SessionID)
			}
		}
	}
	if len(sessions) == 0 {
		if !a.JSON {
			a.Printf("0 windows, 0 memories stored or updated\n")
		}
		return nil
	}
	s, err := openEvents(ctx, c, scope)
	if err != nil {
		return fmt.Errorf("follow extraction: %w", err)
	}
	defer s.close()
	var windows, stored int
	for _, sid := range sessions {
		pending, err := c.Extract(ctx, scope, sid)
		if errors.Is(err, imprint.ErrNotFound) {
			return imprint.Invalidf("--session %q: no such session in scope %s", sid, scope)
		}
		if err != nil {
			return err
		}
		for pending > 0 {
			e, err := s.next(ctx)
			if err != nil {
				return fmt.Errorf("extract session %s: %w", sid, err)
			}
			if e.Name != httpapi.EventExtractionDone && e.Name != httpapi.EventExtractionFailed {
				continue
			}
			var res extract.Result
			if json.Unmarshal(e.Data, &res) != nil || res.SessionID != sid {
				continue
			}
			if len(res.MessageIDs) == 0 && res.Success {
				continue
			}
			windows++
			stored += res.StoredCount
			if err := a.printExtract(res); err != nil {
				return err
			}
			if !res.Success {
				return withExitCode(exitFailure, fmt.Errorf("extract session %s: a window failed on the server; its messages stay pending and the service retries them", sid))
			}
			// Count down by what the windows consumed rather than asking
			// the status again: the service may finish the next window
			// before that answer, and its result would go unprinted.
			pending -= len(res.MessageIDs)
		}
	}
	if !a.JSON {
		a.Printf("%d windows, %d memories stored or updated\n", windows, stored)
	}
	return nil
}
