package node

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/mcp"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/redact"
)

// remoteWait bounds how long a capture or an extraction through a service
// waits for it to finish the work asked for.
const remoteWait = 10 * time.Minute

// Access is where a command reads and writes: the node's data dir itself,
// or the HTTP API of a running imprint serve (Remote), so that its shards
// and indexes stay its own. The local side opens what it needs on first
// use, so a listing never builds the LLM client. An Access is for one
// goroutine.
type Access struct {
	// Remote is the service's client; nil works on the data dir.
	Remote *httpapi.Client
	n      *Node
	rec    *record.Recorder
}

// Access returns the access through c, or to the data dir when c is nil.
func (n *Node) Access(c *httpapi.Client) *Access { return &Access{Remote: c, n: n} }

// ListMemories lists memories newest first.
func (a *Access) ListMemories(ctx context.Context, scope imprint.Scope, f imprint.MemoryFilter) ([]imprint.Memory, error) {
	if a.Remote != nil {
		return a.Remote.Memories(ctx, scope, f)
	}
	st, err := a.n.Store(ctx)
	if err != nil {
		return nil, err
	}
	return st.ListMemories(ctx, scope, f)
}

// ListTraces lists traces in step order.
func (a *Access) ListTraces(ctx context.Context, scope imprint.Scope, f imprint.TraceFilter) ([]imprint.Trace, error) {
	if a.Remote != nil {
		return a.Remote.Traces(ctx, scope, f)
	}
	st, err := a.n.Store(ctx)
	if err != nil {
		return nil, err
	}
	return st.ListTraces(ctx, scope, f)
}

// Search runs the hybrid search q.
func (a *Access) Search(ctx context.Context, q imprint.SearchQuery) ([]imprint.Hit, error) {
	if a.Remote != nil {
		return a.Remote.Search(ctx, q)
	}
	s, err := a.n.Searcher(ctx)
	if err != nil {
		return nil, err
	}
	return s.Search(ctx, q)
}

// Recall returns the context block for q.
func (a *Access) Recall(ctx context.Context, q imprint.RecallQuery) (imprint.RecallResult, error) {
	if a.Remote != nil {
		return a.Remote.Recall(ctx, q)
	}
	r, err := a.n.Recaller(ctx)
	if err != nil {
		return imprint.RecallResult{}, err
	}
	return r.Recall(ctx, q)
}

// Record appends the batch's messages to its session. ErrInvalid for a
// conversation between people through a service (its API does not take
// between_people yet).
func (a *Access) Record(ctx context.Context, b ingest.MessageBatch) (imprint.RecordResult, error) {
	if a.Remote != nil {
		if b.BetweenPeople {
			return imprint.RecordResult{}, imprint.Invalidf("between_people: not supported with --server yet (POST /v1/messages does not take it); record locally")
		}
		return a.Remote.Record(ctx, b.Scope, b.SessionID, b.Messages)
	}
	if a.rec == nil {
		rec, err := a.n.Recorder(ctx)
		if err != nil {
			return imprint.RecordResult{}, err
		}
		a.rec = rec
	}
	return a.rec.RecordSession(ctx, b.Scope, record.Session{SessionID: b.SessionID, Messages: b.Messages, BetweenPeople: b.BetweenPeople})
}

// Capture validates and redacts every episode first (so bad input stores
// nothing and no secret leaves this machine), then captures them one by
// one, calling each with every result as it comes.
func (a *Access) Capture(ctx context.Context, scope imprint.Scope, eps []imprint.Episode, each func(capture.Result) error) error {
	if err := ingest.PrepareEpisodes(eps, scope, redact.String); err != nil {
		return err
	}
	if a.Remote != nil {
		ctx, cancel := context.WithTimeout(ctx, remoteWait)
		defer cancel()
		return a.Remote.CaptureEpisodes(ctx, eps, func(data json.RawMessage) error {
			var res capture.Result
			if err := json.Unmarshal(data, &res); err != nil {
				return fmt.Errorf("capture result: %w: %v", imprint.ErrUnavailable, err)
			}
			return each(res)
		})
	}
	r, err := a.n.Capture(ctx)
	if err != nil {
		return err
	}
	for _, ep := range eps {
		res, err := r.Run(ctx, ep, "")
		if err != nil {
			return err
		}
		if err := each(res); err != nil {
			return err
		}
	}
	return nil
}

// Extract runs extraction over the pending messages of sessionID, or of
// every session of scope when sessionID is "", window after window until
// none is pending, calling each with every window's result. It stops at
// the first failed window with an *ingest.WindowError; ErrInvalid for a session
// the scope does not have.
func (a *Access) Extract(ctx context.Context, scope imprint.Scope, sessionID string, each func(extract.Result) error) error {
	if a.Remote != nil {
		ctx, cancel := context.WithTimeout(ctx, remoteWait)
		defer cancel()
		return a.Remote.ExtractPending(ctx, scope, sessionID, func(data json.RawMessage, success bool) error {
			var res extract.Result
			if err := json.Unmarshal(data, &res); err != nil {
				return fmt.Errorf("extraction result: %w: %v", imprint.ErrUnavailable, err)
			}
			if err := each(res); err != nil {
				return err
			}
			if !success {
				return &ingest.WindowError{Err: fmt.Errorf("extract session %s: a window failed on the server; its messages stay pending and the service retries them", res.SessionID)}
			}
			return nil
		})
	}
	r, err := a.n.Extract(ctx)
	if err != nil {
		return err
	}
	st, err := a.n.Store(ctx)
	if err != nil {
		return err
	}
	return ingest.ExtractNow(ctx, st, r, scope, sessionID, each)
}

// Memories returns memory management by hand: the service's API, else
// curate's Manager over the data dir.
func (a *Access) Memories(ctx context.Context) (imprint.Memories, error) {
	if a.Remote != nil {
		return httpapi.ClientMemories{C: a.Remote}, nil
	}
	runner, err := a.n.Extract(ctx)
	if err != nil {
		return nil, err
	}
	return a.n.Memories(ctx, runner)
}

// mcpDeps returns the MCP server's dependencies: the service's API (where
// end_session queues the extraction), else the data dir, where end_session
// extracts before answering.
func (a *Access) mcpDeps(ctx context.Context) (mcp.Deps, error) {
	if c := a.Remote; c != nil {
		return mcp.Deps{Store: httpapi.ClientReader{C: c}, Search: c, Recall: c, Recorder: c, Sessions: mcp.Queued(c),
			Memories: httpapi.ClientMemories{C: c}, Logger: a.n.Logger}, nil
	}
	st, err := a.n.Store(ctx)
	if err != nil {
		return mcp.Deps{}, err
	}
	recall, err := a.n.Recaller(ctx)
	if err != nil {
		return mcp.Deps{}, err
	}
	rec, err := a.n.Recorder(ctx)
	if err != nil {
		return mcp.Deps{}, err
	}
	ext, err := a.n.Extract(ctx)
	if err != nil {
		return mcp.Deps{}, err
	}
	end := func(ctx context.Context, scope imprint.Scope, sessionID string) (mcp.SessionEnd, error) {
		pending, stored, err := ingest.EndNow(ctx, st, ext, scope, sessionID)
		return mcp.SessionEnd{SessionID: sessionID, PendingMessages: pending, Extracted: true, MemoriesStored: stored}, err
	}
	mems, err := a.n.Memories(ctx, ext)
	if err != nil {
		return mcp.Deps{}, err
	}
	return mcp.Deps{Store: st, Search: recall.Searcher, Recorder: rec, Sessions: mcp.EnderFunc(end), Memories: mems, Logger: a.n.Logger,
		Recall: recall}, nil
}

// NewMCP returns the MCP server of the access for one host in scope.
func (a *Access) NewMCP(ctx context.Context, scope imprint.Scope) (*mcp.Server, error) {
	d, err := a.mcpDeps(ctx)
	if err != nil {
		return nil, err
	}
	return mcp.New(d, mcp.Config{Scope: scope, Version: mcpVersion})
}
