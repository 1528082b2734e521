package extract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

// faultyStore is the test store with injected write failures: the n-th
// PutMemory call (1-based) fails once, and AdvanceCursor fails while
// failCursor is set.
type faultyStore struct {
	imprint.Store
	puts       atomic.Int32
	failPutAt  int32
	failCursor atomic.Bool
}

func (s *faultyStore) PutMemory(ctx context.Context, m imprint.Memory, supersede []string) error {
	if s.puts.Add(1) == s.failPutAt {
		return fmt.Errorf("disk full: %w", imprint.ErrUnavailable)
	}
	return s.Store.PutMemory(ctx, m, supersede)
}

// batchFaultyStore is a faultyStore that writes memories together too
// (imprint.MemoryBatchWriter, through the real store) and fails its first
// PutMemories call, writing nothing, as a store whose batch transaction
// failed: extraction then writes the memories one by one.
type batchFaultyStore struct {
	*faultyStore
	batches atomic.Int32
}

func (s *batchFaultyStore) SupportsMemoryBatch() bool { return true }

func (s *batchFaultyStore) PutMemories(ctx context.Context, puts []imprint.MemoryPut) error {
	if s.batches.Add(1) == 1 {
		return fmt.Errorf("disk full: %w", imprint.ErrUnavailable)
	}
	bw, ok := imprint.AsMemoryBatchWriter(s.Store)
	if !ok {
		return fmt.Errorf("test store %T writes no batches", s.Store)
	}
	return bw.PutMemories(ctx, puts)
}

func (s *faultyStore) AdvanceCursor(ctx context.Context, scope imprint.Scope, sessionID string, toSeq int64, scene string, at time.Time) error {
	if s.failCursor.Load() {
		return fmt.Errorf("database is locked: %w", imprint.ErrUnavailable)
	}
	return s.Store.AdvanceCursor(ctx, scope, sessionID, toSeq, scene, at)
}

// liveContents returns the contents of the scope's live memories, sorted.
func (e *testEnv) liveContents() []string {
	e.t.Helper()
	var out []string
	for _, m := range e.live() {
		out = append(out, m.Content)
	}
	slices.Sort(out)
	return out
}

// A store failure part-way through a window, or when moving the cursor
// after all memories were written, fails the window and keeps its messages
// pending; running it again completes it without duplicating the memories
// that were already written (the exact-text pre-check).
func TestWriteFailuresKeepWindowPendingAndRerunDoesNotDuplicate(t *testing.T) {
	t.Parallel()
	facts := []string{"remember: The user is a pilot.", "remember: The user has two cats.", "remember: The user likes jazz."}
	want := []string{"The user has two cats.", "The user is a pilot.", "The user likes jazz."}
	tests := []struct {
		name       string
		failPutAt  int32
		failCursor bool
		wantLive   int // live memories right after the failed window
	}{
		{"second memory write fails", 2, false, 1},
		{"cursor write fails after every memory", 0, true, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, smallConfig(10, 5))
			fs := &faultyStore{Store: e.store, failPutAt: tt.failPutAt}
			fs.failCursor.Store(tt.failCursor)
			e.deps.Store = fs
			e.runner = NewRunner(e.deps, e.cfg)
			e.srv.Handle(OpExtract, rememberExtractor(t, "Facts"))
			e.record("s1", e.baseDay, facts...)

			res, more, err := e.runner.ExtractNext(e.ctx, e.scope, "s1")
			if !errors.Is(err, imprint.ErrUnavailable) || res.Success || !more {
				t.Fatalf("failed window = %+v, more %v, err %v; want success false, more, ErrUnavailable", res, more, err)
			}
			if n := e.pending("s1"); n != 3 {
				t.Errorf("%d messages pending after the failed window, want all 3", n)
			}
			if n := len(e.live()); n != tt.wantLive {
				t.Errorf("%d memories written before the failure, want %d", n, tt.wantLive)
			}

			fs.failCursor.Store(false)
			res, more, err = e.runner.ExtractNext(e.ctx, e.scope, "s1")
			if err != nil || !res.Success || more {
				t.Fatalf("re-run = %+v, more %v, err %v", res, more, err)
			}
			if res.Decisions.Skip != tt.wantLive || res.StoredCount != 3-tt.wantLive {
				t.Errorf("re-run decisions = %+v, want the %d written memories skipped", res.Decisions, tt.wantLive)
			}
			if diff := cmp.Diff(want, e.liveContents()); diff != "" {
				t.Errorf("live memories after the re-run (-want +got):\n%s", diff)
			}
			if n := e.pending("s1"); n != 0 {
				t.Errorf("%d messages pending after the re-run", n)
			}
		})
	}
}

// brokenEmbedder fails every call.
type brokenEmbedder struct{}

func (brokenEmbedder) Name() string    { return "broken/8" }
func (brokenEmbedder) Dimensions() int { return 8 }
func (brokenEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, fmt.Errorf("embeddings endpoint: %w", imprint.ErrUnavailable)
}

// An embedder failure is not a window failure: the memories are stored
// without vectors, with a warning, recall falls back to keywords, and the
// cursor moves.
func TestEmbedderFailureStoresWithoutVectors(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, smallConfig(10, 5))
	e.putMemory("The user flies gliders.", imprint.MemoryPersona)
	e.deps.Embedder = brokenEmbedder{}
	e.runner = NewRunner(e.deps, e.cfg)
	e.srv.Handle(OpExtract, rememberExtractor(t, "Facts"))
	e.srv.Handle(OpDedup, storeAllJudge(t))
	e.record("s1", e.baseDay, "remember: The user is a glider pilot.")
	res, _, err := e.runner.ExtractNext(e.ctx, e.scope, "s1")
	if err != nil || !res.Success {
		t.Fatalf("window = %+v, %v; want success", res, err)
	}
	if res.StoredCount != 1 || len(res.Records[0].Vec) != 0 || res.Records[0].Embedder != "" {
		t.Errorf("records = %+v, want one memory without a vector", res.Records)
	}
	if warningCodes(res.Warnings)["embed/unavailable"] != 1 {
		t.Errorf("warnings = %+v, want embed/unavailable", res.Warnings)
	}
	vq, tq := e.store.queries()
	if len(vq) != 0 || len(tq) != 1 {
		t.Errorf("recall made %d vector and %d keyword queries, want keywords only", len(vq), len(tq))
	}
	if n := e.pending("s1"); n != 0 {
		t.Errorf("%d messages pending", n)
	}
}

// A reply with thousands of bad memories yields a bounded list of
// warnings that still says how many there were, and the valid memories
// are capped as usual.
func TestHostileReplyKeepsWarningsBounded(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, smallConfig(10, 5))
	var mems []mem
	for i := range 10000 {
		mems = append(mems, mem{Content: fmt.Sprintf("opinion %d", i), Type: "opinion", Priority: 1e9, Sources: []string{"s1-1"}})
	}
	for i := range 10000 {
		mems = append(mems, mem{Content: fmt.Sprintf("The user owns boat %d.", i), Type: "persona", Priority: 70, Sources: []string{"s1-1"}})
	}
	e.srv.Script(OpExtract, scenesReply(scene{Name: "Boats", Memories: mems}))
	e.record("s1", e.baseDay, "I own a lot of boats")
	res, _, err := e.runner.ExtractNext(e.ctx, e.scope, "s1")
	if err != nil || !res.Success {
		t.Fatalf("window = %+v, %v", res.Success, err)
	}
	if res.StoredCount != 10 {
		t.Errorf("stored %d memories, want the cap of 10", res.StoredCount)
	}
	if n := len(res.Warnings); n > 2*(maxWarningsPerCode+1) {
		t.Fatalf("%d warnings, want at most %d", n, 2*(maxWarningsPerCode+1))
	}
	codes := warningCodes(res.Warnings)
	if codes["parse/unknown_type"] != maxWarningsPerCode+1 || codes["parse/memories_capped"] != 1 {
		t.Errorf("warning codes = %v", codes)
	}
	last := res.Warnings[len(res.Warnings)-1]
	if !strings.Contains(last.Message, fmt.Sprint(10000-maxWarningsPerCode)) {
		t.Errorf("last warning %+v does not count the unlisted ones", last)
	}
}
