package main

import (
	"context"
	"errors"

	"github.com/imprint-dev/imprint"
)

// openStore opens the store named by cfg.Store.
// TODO(helper-2): switch to sqlite.Open(ctx, filepath.Join(cfg.DataDir, "imprint.db")) once /work/main/sqlite compiles.
func openStore(ctx context.Context, cfg *Config) (imprint.Store, error) {
	_ = ctx
	if isPostgresURL(cfg.Store) {
		return nil, imprint.Invalidf("store: postgres is not supported yet; use sqlite")
	}
	return nil, errors.New("open store: sqlite store not wired yet (TODO)")
}

// buildLLM builds the LLM client for cfg.LLM; nil when the provider is none.
// TODO: wire llm.New(openai.New|anthropic.New) once llm/ compiles.
func (a *App) buildLLM() (imprint.LLM, error) {
	if a.Config.LLM.Provider == "none" {
		return nil, nil
	}
	return nil, errors.New("llm: providers not wired yet (TODO)")
}

// buildEmbedder builds the embedder for cfg.Embedding; nil when the provider is none.
// TODO: wire embedding.NewHash / NewOpenAI + NewCache once embedding/ compiles.
func (a *App) buildEmbedder() (imprint.Embedder, error) {
	if a.Config.Embedding.Provider == "none" {
		return nil, nil
	}
	return nil, errors.New("embedding: not wired yet (TODO)")
}
