package node

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/anthropic"
	"github.com/imprint-dev/imprint/llm/openai"
	"github.com/imprint-dev/imprint/postgres"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/schedule"
	"github.com/imprint-dev/imprint/sqlite"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// This file is the only place that picks concrete adapters for the
// configuration.

// DBFileName is the SQLite file inside the data dir.
const DBFileName = "imprint.db"

// openStore opens the store named by cfg.Store (the SQLite file of the
// data dir, or the PostgreSQL database of a postgres:// URL), creating the
// data dir when needed: it holds the JSONL shards either way.
func openStore(ctx context.Context, cfg *config.Config) (imprint.Store, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("open store: create data dir: %w: %v", imprint.ErrUnavailable, err)
	}
	if config.IsPostgresURL(cfg.Store) {
		db, err := postgres.Open(ctx, cfg.Store)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", config.MaskURL(cfg.Store), err)
		}
		return db, nil
	}
	db, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, DBFileName))
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return db, nil
}

// StoreName names the store of cfg for people: its kind and where it is
// (a URL without its password).
func StoreName(cfg *config.Config) string {
	if config.IsPostgresURL(cfg.Store) {
		return "postgres " + config.MaskURL(cfg.Store)
	}
	return "sqlite " + filepath.Join(cfg.DataDir, DBFileName)
}

// buildLLM builds the LLM client for n.Config.LLM, with its budget; nil
// when the provider is none. n.mu is held.
func (n *Node) buildLLM() (imprint.LLM, error) {
	c := n.Config.LLM
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
	n.budget = n.newBudget()
	return llm.New(p, llm.Options{
		Budget:      n.budget,
		Timeout:     c.Timeout,
		MaxRetries:  retries(c.MaxRetries),
		Concurrency: c.Concurrency,
		Recorder:    &n.recorder,
		Redact:      redact.String,
		Logger:      n.Logger,
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

// buildEmbedder builds the embedder for n.Config.Embedding; nil when the
// provider is none.
func (n *Node) buildEmbedder() (imprint.Embedder, error) {
	return embedding.FromConfig(n.Config.Embedding, n.Config.LLM.Timeout, retries(n.Config.LLM.MaxRetries))
}

// JobEngine builds the durable-job engine of imprint serve named by
// jobs.engine: the Scheduler over the store's jobs table, or River on the
// store's own database through River's driver for it (riversqlite on the
// sqlite store's writer pool), installed as the store's job engine so that
// enqueueing stays in the store's transactions.
//
// On PostgreSQL the jobs always run on River (riverpgxv5 on a pool of its
// own beside the store's, postgres.DB.JobPool, listening for new jobs),
// whatever jobs.engine says: several nodes may share the database, and
// River with the store's node leases hands a stopped node's running jobs
// to the others (schedule.RiverConfig.Nodes).
func (n *Node) JobEngine(ctx context.Context, svc imprint.ServiceStore, sc schedule.Config) (schedule.Engine, error) {
	if pg, ok := svc.(*postgres.DB); ok {
		host, _ := imprint.AsJobEngineHost[pgx.Tx](svc)
		pool, err := pg.JobPool(ctx)
		if err != nil {
			return nil, fmt.Errorf("jobs engine river: %w", err)
		}
		if pool == nil {
			pool = pg.Pool() // one connection: River shares it
		} else {
			n.mu.Lock()
			n.closers = append(n.closers, func() error { pool.Close(); return nil })
			n.mu.Unlock()
		}
		eng, err := schedule.NewRiver(ctx, riverpgxv5.New(pool), svc,
			schedule.RiverConfig{Config: sc, Listen: pg.CanListen(), Nodes: pg}, n.Logger)
		if err != nil {
			return nil, fmt.Errorf("jobs engine river: %w", err)
		}
		if pool != pg.Pool() {
			// River's tables exist now (its migrations ran).
			if err := postgres.WarmPool(ctx, pool); err != nil {
				n.Logger.Warn("river's connections not warmed", "error", err.Error())
			}
		}
		return installEngine(ctx, host, eng, n.Logger)
	}
	if n.Config.Jobs.Engine != config.JobsEngineRiver {
		return schedule.New(svc, sc, n.Logger), nil
	}
	db, ok := svc.(*sqlite.DB)
	host, hosts := imprint.AsJobEngineHost[*sql.Tx](svc)
	if !ok || !hosts {
		return nil, imprint.Invalidf("config jobs.engine (%s): river runs on the sqlite and postgres stores only", n.Config.Source("jobs.engine"))
	}
	eng, err := schedule.NewRiver(ctx, riversqlite.New(db.WriterDB()), svc, schedule.RiverConfig{Config: sc}, n.Logger)
	if err != nil {
		return nil, fmt.Errorf("jobs engine river: %w", err)
	}
	return installEngine(ctx, host, eng, n.Logger)
}

// installEngine makes eng the store's job engine and moves the unfinished
// jobs of the store's jobs table into it.
func installEngine[TTx any](ctx context.Context, host imprint.JobEngineHost[TTx], eng *schedule.River[TTx], logger *slog.Logger) (schedule.Engine, error) {
	if err := host.SetJobEngine(eng); err != nil {
		return nil, fmt.Errorf("jobs engine river: %w", err)
	}
	if n, err := host.HandOverTableJobs(ctx); err != nil {
		return nil, fmt.Errorf("jobs engine river: %w", err)
	} else if n > 0 {
		logger.Info("unfinished jobs of the jobs table moved to river", "jobs", n)
	}
	return eng, nil
}

// warmStore readies a PostgreSQL store's connections for the first
// requests and jobs (postgres.DB.Warm) before imprint serve listens; a
// failure only costs the first requests their cold start, so it is
// logged.
func (n *Node) warmStore(ctx context.Context, st imprint.ServiceStore) {
	if pg, ok := st.(*postgres.DB); ok {
		if err := pg.Warm(ctx); err != nil {
			n.Logger.Warn("store connections not warmed", "error", err.Error())
		}
	}
}
