package capture

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

func finalized(id string, by imprint.ClosedBy) imprint.Event {
	ep := episode(U("q "+id, 0), A("a", 10))
	ep.ID = id
	return imprint.Event{Type: imprint.EventEpisodeFinalized, Scope: ep.Scope, Payload: imprint.EpisodeEvent{Episode: ep, ClosedBy: by}}
}

func TestSubscriber(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("finalized episodes are captured; drain waits", func(t *testing.T) {
		t.Parallel()
		db := openDB(t)
		var events eventLog
		cfg := DefaultConfig()
		sub := Attach(ctx, NewRunner(Deps{Store: db, Events: &events}, cfg), cfg)
		defer sub.Stop()
		sub.Publish(ctx, finalized("e1", imprint.ClosedFinalized))
		sub.Publish(ctx, finalized("e2", imprint.ClosedAbandoned))
		sub.Publish(ctx, imprint.Event{Type: imprint.EventEpisodeStarted, Payload: imprint.EpisodeEvent{Episode: episode(U("x", 0))}})
		sub.Drain()
		if sub.Pending() != 0 {
			t.Errorf("%d pending after drain", sub.Pending())
		}
		done := 0
		for _, k := range events.kinds() {
			if k == EventDone {
				done++
			}
		}
		if done != 2 {
			t.Errorf("%d captures done, want 2 (the started event is ignored): %v", done, events.kinds())
		}
		for _, id := range []string{"e1", "e2"} {
			if _, err := db.GetEpisode(ctx, imprint.DefaultScope(), id); err != nil {
				t.Errorf("episode %s not captured: %v", id, err)
			}
		}
		got, _ := db.GetEpisode(ctx, imprint.DefaultScope(), "e2")
		if got.Status != imprint.EpisodeAbandoned {
			t.Errorf("e2 status %s, want abandoned", got.Status)
		}
	})
	t.Run("abandoned opt-out", func(t *testing.T) {
		t.Parallel()
		db := openDB(t)
		cfg := config(func(c *Config) { c.CaptureAbandoned = false })
		sub := Attach(ctx, NewRunner(Deps{Store: db}, cfg), cfg)
		defer sub.Stop()
		sub.Publish(ctx, finalized("e1", imprint.ClosedAbandoned))
		sub.Publish(ctx, finalized("e2", imprint.ClosedFinalized))
		sub.Drain()
		if _, err := db.GetEpisode(ctx, imprint.DefaultScope(), "e1"); err == nil {
			t.Error("abandoned episode captured with capture_abandoned off")
		}
		if _, err := db.GetEpisode(ctx, imprint.DefaultScope(), "e2"); err != nil {
			t.Errorf("finalized episode not captured: %v", err)
		}
	})
	t.Run("drain waits for slow captures; stop ignores later events", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		srv.Script(OpBatch, llmtest.Reply{Delay: 50 * time.Millisecond, Text: `{"scores":[{"idx":0,"alpha":0.6,"usable":true}]}`})
		var mu sync.Mutex
		var doneIDs []string
		bus := imprint.PublisherFunc(func(_ context.Context, ev imprint.Event) {
			if e := ev.Payload.(Event); e.Kind == EventDone {
				mu.Lock()
				doneIDs = append(doneIDs, e.EpisodeID)
				mu.Unlock()
			}
		})
		cfg := DefaultConfig()
		sub := Attach(ctx, NewRunner(Deps{LLM: m, Events: bus}, cfg), cfg)
		for _, id := range []string{"a", "b", "c"} {
			ev := finalized(id, "")
			ev.Payload.(imprint.EpisodeEvent).Episode.Turns[1].Meta.Reflection = "I answered directly because the question was simple."
			sub.Publish(ctx, ev)
		}
		sub.Stop()
		sub.Publish(ctx, finalized("late", ""))
		sub.Drain()
		mu.Lock()
		got := append([]string(nil), doneIDs...)
		mu.Unlock()
		if len(got) != 3 {
			t.Errorf("done %v, want a, b and c but not late", got)
		}
		for _, id := range got {
			if id == "late" {
				t.Error("an episode announced after Stop was captured")
			}
		}
	})
	t.Run("errors reach OnError", func(t *testing.T) {
		t.Parallel()
		db := openDB(t)
		db.Close()
		cfg := DefaultConfig()
		sub := Attach(ctx, NewRunner(Deps{Store: db}, cfg), cfg)
		defer sub.Stop()
		var mu sync.Mutex
		var failed []string
		sub.OnError(func(ep imprint.Episode, err error) {
			mu.Lock()
			failed = append(failed, ep.ID)
			mu.Unlock()
		})
		sub.Publish(ctx, finalized("e1", ""))
		sub.Drain()
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff([]string{"e1"}, failed); diff != "" {
			t.Errorf("failed captures (-want +got):\n%s", diff)
		}
	})
}
