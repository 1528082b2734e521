package embedding

import (
	"container/list"
	"context"
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/imprint-dev/imprint"
)

// DefaultCacheSize is the capacity NewCache uses when given size <= 0.
const DefaultCacheSize = 4096

// Cache is an imprint.Embedder that remembers the vectors of the most
// recently embedded texts. Entries are keyed by the inner embedder's Name
// (provider, model and dimension) and the SHA-256 of the text, so a changed
// model or dimension never returns stale vectors. It is safe for concurrent
// use.
type Cache struct {
	inner imprint.Embedder
	size  int

	mu    sync.Mutex
	order *list.List // front = most recently used; values are *cacheEntry
	items map[cacheKey]*list.Element
}

type cacheKey struct {
	name string
	sum  [sha256.Size]byte
}

type cacheEntry struct {
	key cacheKey
	vec []float32
}

// NewCache returns an LRU cache of at most size vectors in front of inner.
// A size <= 0 means DefaultCacheSize.
func NewCache(inner imprint.Embedder, size int) *Cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	return &Cache{inner: inner, size: size, order: list.New(), items: make(map[cacheKey]*list.Element)}
}

// Name returns the inner embedder's name: caching does not change vectors.
func (c *Cache) Name() string { return c.inner.Name() }

// Lexical reports whether the inner embedder is lexical
// (imprint.LexicalEmbedder).
func (c *Cache) Lexical() bool { return imprint.IsLexical(c.inner) }

// Dimensions returns the inner embedder's dimension.
func (c *Cache) Dimensions() int { return c.inner.Dimensions() }

// Len returns the number of cached vectors.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Embed returns one vector per text, in order. Cached texts are answered
// from memory; the others (each distinct text once) go to the inner
// embedder in one call. Errors are the inner embedder's, wrapped; on error
// nothing is cached.
func (c *Cache) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	hit := make([]bool, len(texts))
	sums := make([][sha256.Size]byte, len(texts))
	for i, t := range texts {
		sums[i] = sha256.Sum256([]byte(t))
	}

	name := c.inner.Name()
	var misses []string
	missAt := map[[sha256.Size]byte]int{} // text digest -> index in misses
	c.mu.Lock()
	for i := range texts {
		if el, ok := c.items[cacheKey{name, sums[i]}]; ok {
			c.order.MoveToFront(el)
			out[i] = clone(el.Value.(*cacheEntry).vec)
			hit[i] = true
			continue
		}
		if _, ok := missAt[sums[i]]; !ok {
			missAt[sums[i]] = len(misses)
			misses = append(misses, texts[i])
		}
	}
	c.mu.Unlock()
	if len(misses) == 0 {
		return out, nil
	}

	vecs, err := c.inner.Embed(ctx, misses)
	if err != nil {
		return nil, fmt.Errorf("embed %d uncached texts: %w", len(misses), err)
	}
	if len(vecs) != len(misses) {
		return nil, fmt.Errorf("%w: embedder %s returned %d vectors for %d texts", imprint.ErrUnavailable, name, len(vecs), len(misses))
	}
	// An embedder that learns its dimension from the first reply changes
	// its name; store under the name that made the vectors.
	name = c.inner.Name()
	c.mu.Lock()
	defer c.mu.Unlock()
	given := make([]bool, len(misses))
	for i := range texts {
		if hit[i] {
			continue
		}
		k := missAt[sums[i]]
		v := vecs[k]
		// The inner embedder's vector goes to the caller (a copy to each
		// later one of the same text), the cache keeps a copy of its own.
		if given[k] {
			out[i] = clone(v)
		} else {
			given[k], out[i] = true, v
		}
		c.put(cacheKey{name, sums[i]}, v)
	}
	return out, nil
}

// put stores v under k, evicting the least recently used entry when full.
// The caller holds c.mu.
func (c *Cache) put(k cacheKey, v []float32) {
	if el, ok := c.items[k]; ok {
		el.Value.(*cacheEntry).vec = clone(v)
		c.order.MoveToFront(el)
		return
	}
	c.items[k] = c.order.PushFront(&cacheEntry{key: k, vec: clone(v)})
	for c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
}

// clone copies v so callers cannot change cached vectors.
func clone(v []float32) []float32 {
	c := make([]float32, len(v))
	copy(c, v)
	return c
}
