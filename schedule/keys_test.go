package schedule

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// TestLookAlikeSessionsEachGetTheirJobs: sessions and episodes whose scope
// and id only look alike when joined ("a:b" of agent "x" and "b" of agent
// "x:a"; episode "d:EPD" of agent "ag" and "EPD" of agent "ag:d") each get
// their own extraction or capture job on both engines, and every job runs:
// none is taken for another's and lost.
func TestLookAlikeSessionsEachGetTheirJobs(t *testing.T) {
	at := func(agent string) imprint.Scope { return imprint.Scope{Tenant: "t", User: "u", Agent: agent} }
	jobs := []imprint.Job{
		{Kind: imprint.JobExtract, Scope: at("x"), SessionID: "a:b"},
		{Kind: imprint.JobExtract, Scope: at("x:a"), SessionID: "b"},
		{Kind: imprint.JobExtract, Scope: imprint.Scope{Tenant: "t/u", User: "v", Agent: "w"}, SessionID: "s"},
		{Kind: imprint.JobExtract, Scope: imprint.Scope{Tenant: "t", User: "u/v", Agent: "w"}, SessionID: "s"},
		{Kind: imprint.JobCapture, Scope: at("ag"), SessionID: "s", EpisodeID: "d:EPD", UniqueKey: imprint.CaptureJobKey(at("ag"), "d:EPD")},
		{Kind: imprint.JobCapture, Scope: at("ag:d"), SessionID: "s", EpisodeID: "EPD", UniqueKey: imprint.CaptureJobKey(at("ag:d"), "EPD")},
	}
	ran := func(j imprint.Job) string {
		return string(j.Kind) + " " + j.Scope.Tenant + "|" + j.Scope.User + "|" + j.Scope.Agent + "|" + j.SessionID + "|" + j.EpisodeID
	}
	var want []string
	for _, j := range jobs {
		want = append(want, ran(j))
	}
	slices.Sort(want)
	engines := map[string]func(t *testing.T) Engine{
		"table": func(t *testing.T) Engine { return New(openStore(t), fastConfig(), nil) },
		"river": func(t *testing.T) Engine {
			_, e := openRiver(t, filepath.Join(t.TempDir(), "imprint.db"), fastConfig())
			return e
		},
	}
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := open(t)
			ids := map[int64]bool{}
			for _, j := range jobs {
				got, err := e.Enqueue(t.Context(), j)
				if err != nil {
					t.Fatal(err)
				}
				if ids[got.ID] {
					t.Errorf("%s: enqueue returned job %d, already another's (key %q)", ran(j), got.ID, got.UniqueKey)
				}
				ids[got.ID] = true
			}
			var mu sync.Mutex
			var done []string
			all := make(chan struct{})
			h := func(_ context.Context, j imprint.Job) error {
				mu.Lock()
				defer mu.Unlock()
				done = append(done, ran(j))
				if len(done) == len(ids) { // every job stored, however many that is
					close(all)
				}
				return nil
			}
			e.Handle(imprint.JobExtract, h)
			e.Handle(imprint.JobCapture, h)
			ctx, cancel := context.WithCancel(context.Background())
			res := make(chan error, 1)
			go func() { res <- e.Run(ctx) }()
			select {
			case <-all:
			case <-time.After(20 * time.Second): // guards against a hang only
				mu.Lock()
				t.Errorf("jobs run: %q; want all of %q", done, want)
				mu.Unlock()
			}
			cancel()
			if err := <-res; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			slices.Sort(done)
			if !slices.Equal(done, want) {
				t.Errorf("jobs run: %q, want %q", done, want)
			}
		})
	}
}
