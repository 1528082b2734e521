package capture

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/internal/testfiles"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/sqlite"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// at is t0 plus ms milliseconds.
func at(ms int) imprint.Time { return imprint.At(t0.Add(time.Duration(ms) * time.Millisecond)) }

func U(text string, ms int) imprint.Turn {
	return imprint.Turn{Role: imprint.RoleUser, Content: text, TS: at(ms)}
}

func A(text string, ms int) imprint.Turn {
	return imprint.Turn{Role: imprint.RoleAssistant, Content: text, TS: at(ms)}
}

// AR is an assistant turn with an adapter-native reflection.
func AR(text, reflection string, ms int) imprint.Turn {
	t := A(text, ms)
	t.Meta.Reflection = reflection
	return t
}

func T(name, input, output string, ms int) imprint.Turn {
	return imprint.Turn{Role: imprint.RoleTool, Content: output, TS: at(ms),
		Meta: imprint.TurnMeta{Name: name, Input: json.RawMessage(input)}}
}

func S(text string, ms int) imprint.Turn {
	return imprint.Turn{Role: imprint.RoleSystem, Content: text, TS: at(ms)}
}

func episode(turns ...imprint.Turn) imprint.Episode {
	return imprint.Episode{ID: "ep-1", SessionID: "se-1", Turns: turns}
}

// exchanges returns an episode of n user/assistant pairs; the assistant
// turns carry a reflection when withReflection is set.
func exchanges(n int, withReflection bool) imprint.Episode {
	var turns []imprint.Turn
	for i := range n {
		turns = append(turns, U("question "+itoa(i), 100*i))
		if withReflection {
			turns = append(turns, AR("answer "+itoa(i), "I answered "+itoa(i)+" because the user asked for it.", 100*i+50))
		} else {
			turns = append(turns, A("answer "+itoa(i), 100*i+50))
		}
	}
	return episode(turns...)
}

func itoa(i int) string { return strconv.Itoa(i) }

// openDB opens a fresh SQLite store in a temp dir.
func openDB(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newLLM starts a fake provider and returns it with a client.
func newLLM(t testing.TB) (*llmtest.Server, imprint.LLM) {
	t.Helper()
	srv := llmtest.NewServer(t)
	return srv, llmtest.NewClient(t, srv, llmtest.FormatOpenAI)
}

// config returns the defaults with fn applied.
func config(fn func(*Config)) Config {
	c := DefaultConfig()
	if fn != nil {
		fn(&c)
	}
	return c
}

// recordingEmbedder wraps the hash embedder, records each call's texts and
// fails when err is set.
type recordingEmbedder struct {
	mu    sync.Mutex
	calls [][]string
	err   error
	inner imprint.Embedder
}

func newRecordingEmbedder() *recordingEmbedder {
	return &recordingEmbedder{inner: embedding.NewHash()}
}

func (e *recordingEmbedder) Name() string    { return e.inner.Name() }
func (e *recordingEmbedder) Dimensions() int { return e.inner.Dimensions() }
func (e *recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls = append(e.calls, append([]string(nil), texts...))
	err := e.err
	e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return e.inner.Embed(ctx, texts)
}

func (e *recordingEmbedder) Calls() [][]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([][]string(nil), e.calls...)
}

var errEmbedDown = errors.New("embedding provider down")

// sharedTestdata returns the path of a file in the repository's testdata
// folder.
func sharedTestdata(t testing.TB, rel string) string { return testfiles.Path(t, rel) }

// eventLog records the capture events a Runner publishes.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

// Publish records e's payload.
func (l *eventLog) Publish(_ context.Context, e imprint.Event) { l.add(e.Payload.(Event)) }

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		out = append(out, e.Kind)
	}
	return out
}

func (l *eventLog) all() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}
