package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/search"
	"github.com/imprint-dev/imprint/shard"
)

// This file builds the pipelines (capture, extraction, recording, search)
// from the App's configuration and adapters.

// captureRunner returns a capture runner over the store, LLM and embedder.
func (a *App) captureRunner(ctx context.Context) (*capture.Runner, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	m, err := a.LLM()
	if err != nil {
		return nil, err
	}
	var emb imprint.Embedder
	if a.Config.Capture.EmbedTraces {
		if emb, err = a.Embedder(); err != nil {
			return nil, err
		}
	}
	cfg := capture.ConfigFrom(a.Config.Capture)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return capture.NewRunner(capture.Deps{Store: st, LLM: m, Embedder: emb, Logger: a.Logger, Redact: redact.String}, cfg), nil
}

// extractRunner returns an extraction runner writing memory changes to
// <data_dir>/records.
func (a *App) extractRunner(ctx context.Context) (*extract.Runner, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	m, err := a.LLM()
	if err != nil {
		return nil, err
	}
	emb, err := a.Embedder()
	if err != nil {
		return nil, err
	}
	records, err := shard.NewWriter(filepath.Join(a.Config.DataDir, "records"))
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	return extract.NewRunner(extract.Deps{Store: st, LLM: m, Embedder: emb, Records: records, Logger: a.Logger}, extract.ConfigFrom(a.Config.Extraction)), nil
}

// searcher returns the hybrid searcher over the store and embedder.
func (a *App) searcher(ctx context.Context) (search.Searcher, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return search.Searcher{}, err
	}
	emb, err := a.Embedder()
	if err != nil {
		return search.Searcher{}, err
	}
	return search.Searcher{Store: st, Embedder: emb}, nil
}

// l0Recorder returns the L0 recorder writing conversations day shards to
// <data_dir>/conversations.
func (a *App) l0Recorder(ctx context.Context) (*record.Recorder, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	emb, err := a.Embedder()
	if err != nil {
		return nil, err
	}
	conv, err := shard.NewWriter(filepath.Join(a.Config.DataDir, "conversations"))
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return record.NewRecorder(record.Deps{Store: st, Embedder: emb, Redact: redact.String, Conversations: conv, Logger: a.Logger},
		record.ConfigFrom(a.Config.Extraction)), nil
}
