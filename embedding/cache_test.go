package embedding

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint"
)

var _ imprint.Embedder = (*Cache)(nil)

// recorder is a Hash that records the texts of every Embed call and can be
// told to fail.
type recorder struct {
	Hash
	mu    sync.Mutex
	calls [][]string
	fail  error
}

func (r *recorder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.calls = append(r.calls, append([]string(nil), texts...))
	fail := r.fail
	r.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	return r.Hash.Embed(ctx, texts)
}

func (r *recorder) took() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

func mustEmbed(t *testing.T, e imprint.Embedder, texts ...string) [][]float32 {
	t.Helper()
	v, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	return v
}

func TestCacheAnswersRepeatsFromMemory(t *testing.T) {
	t.Parallel()
	inner := &recorder{}
	c := NewCache(inner, 100)
	first := mustEmbed(t, c, "alpha", "beta", "gamma")
	second := mustEmbed(t, c, "alpha", "beta", "gamma")
	if diff := cmp.Diff(mustEmbed(t, NewHash(), "alpha", "beta", "gamma"), first); diff != "" {
		t.Errorf("cached vectors differ from the inner embedder's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("second call differs (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"alpha", "beta", "gamma"}}, inner.took()); diff != "" {
		t.Errorf("inner calls (-want +got):\n%s", diff)
	}
	if c.Name() != HashName || c.Dimensions() != HashDimensions {
		t.Errorf("Name, Dimensions = %q, %d; want the inner embedder's", c.Name(), c.Dimensions())
	}
}

func TestCacheSendsOnlyMissesInOrder(t *testing.T) {
	t.Parallel()
	inner := &recorder{}
	c := NewCache(inner, 100)
	mustEmbed(t, c, "b", "d")
	inner.took()
	in := []string{"a", "b", "c", "a", "d", "e", "c"}
	got := mustEmbed(t, c, in...)
	if diff := cmp.Diff([][]string{{"a", "c", "e"}}, inner.took()); diff != "" {
		t.Errorf("inner calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(mustEmbed(t, NewHash(), in...), got); diff != "" {
		t.Errorf("vectors out of order (-want +got):\n%s", diff)
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	inner := &recorder{}
	c := NewCache(inner, 2)
	mustEmbed(t, c, "a", "b")
	mustEmbed(t, c, "a") // a is now the most recently used
	mustEmbed(t, c, "c") // evicts b
	if c.Len() != 2 {
		t.Errorf("Len = %d, want 2", c.Len())
	}
	inner.took()
	mustEmbed(t, c, "a", "b", "c")
	// a stayed and b was evicted; storing b then evicts a, the least recently
	// used after this call looked up a and c.
	if diff := cmp.Diff([][]string{{"b"}}, inner.took()); diff != "" {
		t.Errorf("inner calls (-want +got):\n%s", diff)
	}
}

func TestCacheReturnsCopies(t *testing.T) {
	t.Parallel()
	c := NewCache(NewHash(), 10)
	v := mustEmbed(t, c, "mutable")[0]
	want := append([]float32(nil), v...)
	for i := range v {
		v[i] = 42
	}
	if diff := cmp.Diff(want, mustEmbed(t, c, "mutable")[0]); diff != "" {
		t.Errorf("a caller's change reached the cache (-want +got):\n%s", diff)
	}
	// The same new text twice in one call: two vectors of their own.
	twice := mustEmbed(t, c, "again", "again")
	want = append([]float32(nil), twice[1]...)
	for i := range twice[0] {
		twice[0][i] = 42
	}
	if diff := cmp.Diff(want, twice[1]); diff != "" {
		t.Errorf("a change to one vector reached the other of the same text (-want +got):\n%s", diff)
	}
}

func TestCacheDoesNotCacheFailures(t *testing.T) {
	t.Parallel()
	inner := &recorder{fail: fmt.Errorf("%w: provider down", imprint.ErrUnavailable)}
	c := NewCache(inner, 10)
	if _, err := c.Embed(t.Context(), []string{"x"}); !errors.Is(err, imprint.ErrUnavailable) {
		t.Fatalf("Embed error = %v, want the inner kind", err)
	}
	inner.mu.Lock()
	inner.fail = nil
	inner.mu.Unlock()
	mustEmbed(t, c, "x")
	if n := len(inner.took()); n != 2 {
		t.Errorf("%d inner calls, want 2 (the failure was not cached)", n)
	}
}

// nameChanger is an embedder whose name (its model) changes, like a
// configuration switch between runs.
type nameChanger struct {
	Hash
	name string
}

func (n *nameChanger) Name() string { return n.name }

func TestCacheKeysByEmbedderName(t *testing.T) {
	t.Parallel()
	inner := &nameChanger{name: "model-a/384"}
	c := NewCache(inner, 10)
	mustEmbed(t, c, "same text")
	inner.name = "model-b/384"
	mustEmbed(t, c, "same text")
	if c.Len() != 2 {
		t.Errorf("Len = %d, want one entry per embedder name", c.Len())
	}
}

func TestCacheConcurrentUse(t *testing.T) {
	t.Parallel()
	c := NewCache(NewHash(), 50)
	want := mustEmbed(t, NewHash(), texts(200)...)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				k := (g*37 + i*11) % 200
				got, err := c.Embed(t.Context(), []string{texts(200)[k], texts(200)[(k+1)%200]})
				if err != nil {
					errs <- err
					return
				}
				if !cmp.Equal(want[k], got[0]) || !cmp.Equal(want[(k+1)%200], got[1]) {
					errs <- fmt.Errorf("wrong vector for text %d", k)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c.Len() > 50 {
		t.Errorf("Len = %d exceeds the size 50", c.Len())
	}
}

func TestNewCacheDefaultSize(t *testing.T) {
	t.Parallel()
	if c := NewCache(NewHash(), 0); c.size != DefaultCacheSize {
		t.Errorf("size = %d, want %d", c.size, DefaultCacheSize)
	}
}
