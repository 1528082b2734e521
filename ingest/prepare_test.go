package ingest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/record"
)

// seenEmbedder is the hash embedder, counting the texts it embedded.
type seenEmbedder struct {
	*embedding.Hash
	mu    sync.Mutex
	texts int
}

func (e *seenEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.texts += len(texts)
	e.mu.Unlock()
	return e.Hash.Embed(ctx, texts)
}

func (e *seenEmbedder) seen() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.texts
}

// TestImportPreparesBeforeTheStore starts reading with a Prepare recorder
// and no store, recorder or runners yet (node.Import opens the store after
// StartReading): the messages of every source are embedded before any
// store exists. Given the pipelines then, the import stores what an import
// without Prepare stores.
func TestImportPreparesBeforeTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sources := tauSources(t, 10)
	sessions := sessionsOf(t, sources)

	plainDB := openDB(t)
	plain := newImporter(t, plainDB, nil)
	wantSum, err := plain.Run(ctx, sources)
	if err != nil {
		t.Fatal(err)
	}

	emb := &seenEmbedder{Hash: embedding.NewHash()}
	im := &Importer{Scope: ana, Prepare: record.NewRecorder(record.Deps{Embedder: emb}, record.Config{})}
	rd := im.StartReading(ctx, sources)
	defer rd.Close()
	deadline := time.Now().Add(30 * time.Second)
	// readAheadSources of the four sources are prepared before the first
	// is taken.
	for emb.seen() < wantSum.MessagesRecorded*3/4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := emb.seen(); got == 0 {
		t.Fatalf("no message embedded before the store was there")
	}

	db := openDB(t)
	p := newImporter(t, db, nil)
	im.Store, im.Recorder, im.Capture, im.Extract = db, p.Recorder, p.Capture, p.Extract
	im.WindowSize, im.Background = p.WindowSize, p.Background
	sum, err := im.RunReading(ctx, rd)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantSum, sum); diff != "" {
		t.Errorf("summary (-without Prepare +with):\n%s", diff)
	}
	if diff := cmp.Diff(storeCounts(t, plainDB, sessions), storeCounts(t, db, sessions)); diff != "" {
		t.Errorf("stored (-without Prepare +with):\n%s", diff)
	}
	for _, sid := range sessions[:3] {
		a, err := plainDB.PendingMessages(ctx, ana, sid, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := db.PendingMessages(ctx, ana, sid, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Errorf("session %s: %d pending messages with Prepare, %d without", sid, len(b), len(a))
		}
	}
	if emb.seen() < wantSum.MessagesRecorded {
		t.Errorf("the Prepare recorder embedded %d texts, fewer than the %d messages recorded", emb.seen(), wantSum.MessagesRecorded)
	}
}
