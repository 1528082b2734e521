package node

import (
	"context"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/ingest"
)

// Doctor opens the store, the LLM client and the embedder and runs imprint
// doctor's checks on them (ingest.CheckConfig, CheckStore, CheckLLM,
// CheckEmbedding), with the configuration in effect for scope. What fails
// to open is a failed check, not an error.
func (n *Node) Doctor(ctx context.Context, scope imprint.Scope) ingest.Doctor {
	st, stErr := n.Store(ctx)
	m, llmErr := n.LLM()
	emb, embErr := n.Embedder()
	return ingest.Doctor{Config: n.Config, Checks: []ingest.Check{
		ingest.CheckConfig(n.Config, scope),
		ingest.CheckStore(ctx, st, stErr, StoreName(n.Config)),
		ingest.CheckLLM(ctx, m, llmErr, n.Config.LLM.BaseURL),
		ingest.CheckEmbedding(ctx, emb, embErr),
	}}
}

// KeyStore returns the API keys of the configured store. ErrInvalid for a
// store that keeps none.
func (n *Node) KeyStore(ctx context.Context) (imprint.APIKeyStore, error) {
	st, err := n.Store(ctx)
	if err != nil {
		return nil, err
	}
	keys, ok := st.(imprint.APIKeyStore)
	if !ok {
		return nil, imprint.Invalidf("store %q keeps no API keys", n.Config.Store)
	}
	return keys, nil
}
