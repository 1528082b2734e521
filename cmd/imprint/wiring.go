package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/anthropic"
	"github.com/imprint-dev/imprint/llm/openai"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/schedule"
	"github.com/imprint-dev/imprint/sqlite"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// This file is the only place that picks concrete adapters for the
// configuration.

// dbFileName is the SQLite file inside the data dir.
const dbFileName = "imprint.db"

// embeddingCacheSize is how many vectors the embedder cache keeps.
const embeddingCacheSize = 4096

// openStore opens the store named by cfg.Store, creating the data dir when
// needed. ErrInvalid for a postgres:// URL (not supported yet).
func openStore(ctx context.Context, cfg *config.Config) (imprint.Store, error) {
	if config.IsPostgresURL(cfg.Store) {
		return nil, imprint.Invalidf("config store (%s): postgres is not supported yet; use store: sqlite", cfg.Source("store"))
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("open store: create data dir: %w: %v", imprint.ErrUnavailable, err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, dbFileName))
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return db, nil
}

// buildLLM builds the LLM client for a.Config.LLM, with its budget; nil
// when the provider is none. a.mu is held.
func (a *App) buildLLM() (imprint.LLM, error) {
	c := a.Config.LLM
	var p llm.Provider
	switch c.Provider {
	case config.ProviderNone:
		return nil, nil
	case config.ProviderOpenAI:
		p = openai.New(openai.Config{BaseURL: c.BaseURL, APIKey: c.APIKey, Model: c.Model})
	case config.ProviderAnthropic:
		p = anthropic.New(anthropic.Config{BaseURL: c.BaseURL, APIKey: c.APIKey, Model: c.Model})
	default:
		return nil, imprint.Invalidf("config llm.provider: unknown provider %q", c.Provider)
	}
	a.budget = a.newBudget()
	return llm.New(p, llm.Options{
		Budget:      a.budget,
		Timeout:     c.Timeout,
		MaxRetries:  retries(c.MaxRetries),
		Concurrency: c.Concurrency,
		Recorder:    &a.recorder,
		Redact:      redact.String,
		Logger:      a.Logger,
	}), nil
}

// retries converts max_retries (0 = none) to the adapters' convention
// (0 = default, negative = none).
func retries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// buildEmbedder builds the embedder for a.Config.Embedding, behind an LRU
// cache; nil when the provider is none.
func (a *App) buildEmbedder() (imprint.Embedder, error) {
	c := a.Config.Embedding
	var inner imprint.Embedder
	switch c.Provider {
	case config.ProviderNone:
		return nil, nil
	case config.ProviderHash:
		inner = embedding.NewHash()
	case config.ProviderOpenAI:
		o, err := embedding.NewOpenAI(embedding.OpenAIConfig{
			BaseURL:    c.BaseURL,
			APIKey:     c.APIKey,
			Model:      c.Model,
			Dimensions: c.Dimensions,
			Timeout:    a.Config.LLM.Timeout,
			MaxRetries: retries(a.Config.LLM.MaxRetries),
		})
		if err != nil {
			return nil, fmt.Errorf("embedding: %w", err)
		}
		inner = o
	default:
		return nil, imprint.Invalidf("config embedding.provider: unknown provider %q", c.Provider)
	}
	return embedding.NewCache(inner, embeddingCacheSize), nil
}

// callRecorder records every LLM call attempt in memory (for the summaries
// a command prints) and in the store's call log once the store is open.
type callRecorder struct {
	mem   llm.MemoryRecorder
	store atomic.Pointer[storeRef]
}

type storeRef struct{ s imprint.Store }

// RecordLLMCall implements imprint.CallRecorder.
func (r *callRecorder) RecordLLMCall(ctx context.Context, c imprint.LLMCall) error {
	_ = r.mem.RecordLLMCall(ctx, c)
	if ref := r.store.Load(); ref != nil {
		if err := ref.s.RecordLLMCall(ctx, c); err != nil {
			return fmt.Errorf("record llm call: %w", err)
		}
	}
	return nil
}

// jobEngine builds the durable-job engine of imprint serve named by
// jobs.engine: the Scheduler over the store's jobs table, or River on the
// store's own database through River's driver for it (riversqlite on the
// sqlite store's writer pool), installed as the store's job engine so that
// enqueueing stays in the store's transactions.
func (a *App) jobEngine(ctx context.Context, svc imprint.ServiceStore, sc schedule.Config) (schedule.Engine, error) {
	if a.Config.Jobs.Engine != config.JobsEngineRiver {
		return schedule.New(svc, sc, a.Logger), nil
	}
	db, ok := svc.(*sqlite.DB)
	host, hosts := imprint.AsJobEngineHost[*sql.Tx](svc)
	if !ok || !hosts {
		return nil, imprint.Invalidf("config jobs.engine (%s): river runs on the sqlite store only", a.Config.Source("jobs.engine"))
	}
	eng, err := schedule.NewRiver(ctx, riversqlite.New(db.WriterDB()), svc, schedule.RiverConfig{Config: sc}, a.Logger)
	if err != nil {
		return nil, fmt.Errorf("jobs engine river: %w", err)
	}
	if err := host.SetJobEngine(eng); err != nil {
		return nil, fmt.Errorf("jobs engine river: %w", err)
	}
	if n, err := host.HandOverTableJobs(ctx); err != nil {
		return nil, fmt.Errorf("jobs engine river: %w", err)
	} else if n > 0 {
		a.Logger.Info("unfinished jobs of the jobs table moved to river", "jobs", n)
	}
	return eng, nil
}
