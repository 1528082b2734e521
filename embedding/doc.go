// Package embedding turns text into vectors for imprint's vector recall.
//
// Hash is the default: a deterministic local feature-hashing embedder that
// needs no model download, so recall works offline. OpenAI speaks to any
// OpenAI-compatible /v1/embeddings endpoint for real semantic vectors. Cache
// wraps either one with an LRU keyed by embedder name and text digest.
//
// Every vector is L2-normalized, so a dot product is a cosine similarity. An
// embedder's Name records which scheme made a vector; vectors of different
// names must not be compared, and changing embedder or dimension requires
// re-embedding.
package embedding
