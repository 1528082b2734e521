package embedding

import (
	"fmt"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
)

// CacheSize is how many vectors the embedder FromConfig builds keeps in
// its LRU cache.
const CacheSize = 4096

// FromConfig builds the embedder the embedding section names, behind an
// LRU cache of CacheSize vectors: the hashing embedder, or an
// OpenAI-compatible endpoint with the LLM section's timeout and retries
// (maxRetries as the adapters count them: 0 the default, negative none).
// It returns nil (and no error) for provider none, ErrInvalid for an
// unknown provider.
func FromConfig(c config.EmbeddingConfig, timeout time.Duration, maxRetries int) (imprint.Embedder, error) {
	var inner imprint.Embedder
	switch c.Provider {
	case config.ProviderNone:
		return nil, nil
	case config.ProviderHash:
		inner = NewHash()
	case config.ProviderOpenAI:
		o, err := NewOpenAI(OpenAIConfig{BaseURL: c.BaseURL, APIKey: c.APIKey, Model: c.Model, Dimensions: c.Dimensions,
			Timeout: timeout, MaxRetries: maxRetries})
		if err != nil {
			return nil, fmt.Errorf("embedding: %w", err)
		}
		inner = o
	default:
		return nil, imprint.Invalidf("config embedding.provider: unknown provider %q", c.Provider)
	}
	return NewCache(inner, CacheSize), nil
}
