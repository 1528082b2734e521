package node

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/search"
	"github.com/imprint-dev/imprint/shard"
)

// This file builds the pipelines (capture, extraction, recording, search)
// from the node's configuration and adapters.

// Capture returns a capture runner over the store, LLM and embedder.
func (n *Node) Capture(ctx context.Context) (*capture.Runner, error) {
	return n.capture(ctx, nil)
}

// capture is Capture publishing its runs (capture.started, capture.done,
// capture.failed, each with the episode's scope) to events (nil: none).
func (n *Node) capture(ctx context.Context, events imprint.Publisher) (*capture.Runner, error) {
	st, err := n.Store(ctx)
	if err != nil {
		return nil, err
	}
	m, err := n.LLM()
	if err != nil {
		return nil, err
	}
	var emb imprint.Embedder
	if n.Config.Capture.EmbedTraces {
		if emb, err = n.Embedder(); err != nil {
			return nil, err
		}
	}
	cfg := capture.ConfigFrom(n.Config.Capture)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return capture.NewRunner(capture.Deps{Store: st, LLM: m, Embedder: emb, Events: events, Logger: n.Logger, Redact: redact.String}, cfg), nil
}

// Extract returns an extraction runner writing memory changes to
// <data_dir>/records.
func (n *Node) Extract(ctx context.Context) (*extract.Runner, error) {
	st, err := n.Store(ctx)
	if err != nil {
		return nil, err
	}
	m, err := n.LLM()
	if err != nil {
		return nil, err
	}
	emb, err := n.Embedder()
	if err != nil {
		return nil, err
	}
	records, err := n.shardWriter("records", "extract")
	if err != nil {
		return nil, err
	}
	return extract.NewRunner(extract.Deps{Store: st, LLM: m, Embedder: emb, Records: records, Logger: n.Logger}, extract.ConfigFrom(n.Config.Extraction)), nil
}

// Recaller returns the builder of the recall block over the searcher and
// the store.
func (n *Node) Recaller(ctx context.Context) (search.Recaller, error) {
	s, err := n.Searcher(ctx)
	if err != nil {
		return search.Recaller{}, err
	}
	st, err := n.Store(ctx)
	if err != nil {
		return search.Recaller{}, err
	}
	return search.Recaller{Searcher: s, Memories: st, Traces: st, Messages: st}, nil
}

// Searcher returns the hybrid searcher over the store and embedder.
func (n *Node) Searcher(ctx context.Context) (search.Searcher, error) {
	st, emb, err := n.storeEmbedder(ctx)
	return search.Searcher{Store: st, Embedder: emb}, err
}

// Recorder returns the L0 recorder writing conversations day shards to
// <data_dir>/conversations.
func (n *Node) Recorder(ctx context.Context) (*record.Recorder, error) {
	st, emb, err := n.storeEmbedder(ctx)
	if err != nil {
		return nil, err
	}
	conv, err := n.shardWriter("conversations", "record")
	if err != nil {
		return nil, err
	}
	return record.NewRecorder(record.Deps{Store: st, Embedder: emb, Redact: redact.String, Conversations: conv, Logger: n.Logger},
		record.ConfigFrom(n.Config.Extraction)), nil
}

// Memories returns curate's Manager (memory management by hand) over the
// store, runner's dedup and write path and the data dir's shards.
func (n *Node) Memories(ctx context.Context, runner *extract.Runner) (*curate.Manager, error) {
	st, err := n.Store(ctx)
	if err != nil {
		return nil, err
	}
	records, err := n.shardWriter("records", "memories")
	if err != nil {
		return nil, err
	}
	conv, err := n.shardWriter("conversations", "memories")
	if err != nil {
		return nil, err
	}
	return curate.New(curate.Deps{Store: st, Extract: runner, Records: records, Conversations: conv,
		Redact: redact.String, Logger: n.Logger}), nil
}

// storeEmbedder opens the store and the embedder (nil when
// embedding.provider is none).
func (n *Node) storeEmbedder(ctx context.Context) (imprint.Store, imprint.Embedder, error) {
	st, err := n.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	emb, err := n.Embedder()
	if err != nil {
		return nil, nil, err
	}
	return st, emb, nil
}

// shardWriter returns the writer of the data dir's log name (records or
// conversations); its errors name what (the pipeline it is for).
func (n *Node) shardWriter(name, what string) (*shard.Writer, error) {
	w, err := shard.NewWriter(filepath.Join(n.Config.DataDir, name))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return w, nil
}
