package capture

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/sqlite"
)

// plainStore hides the sqlite store's SaveCaptures, so RunMany saves one
// episode at a time.
type plainStore struct{ imprint.Store }

// manyEpisodes are episodes of two sessions, one with a tool call.
func manyEpisodes() []imprint.Episode {
	a := exchanges(3, true)
	a.ID = "ep-a"
	b := episode(U("find a flight", 0), A("searching", 10), T("search", `{"q":"SFO"}`, `["UA1"]`, 20), A("UA1 it is", 30))
	b.ID, b.SessionID = "ep-b", "se-2"
	c := exchanges(1, false)
	c.ID = "ep-c"
	return []imprint.Episode{a, b, c}
}

func TestRunManyLikeRunOneByOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eps := manyEpisodes()
	ignore := cmpopts.IgnoreFields(imprint.Trace{}, "CreatedAt")
	ignoreMS := cmpopts.IgnoreFields(Result{}, "StageMS")

	one := openDB(t)
	r1 := NewRunner(Deps{Store: one, Embedder: embedding.NewHash()}, DefaultConfig())
	var want []Result
	for _, ep := range eps {
		res, err := r1.Run(ctx, ep, "")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res)
	}
	for _, tc := range []struct {
		name  string
		store func(*testing.T) (imprint.Store, *sqlite.DB)
	}{
		{"one transaction", func(t *testing.T) (imprint.Store, *sqlite.DB) { db := openDB(t); return db, db }},
		{"store without SaveCaptures", func(t *testing.T) (imprint.Store, *sqlite.DB) { db := openDB(t); return plainStore{db}, db }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, db := tc.store(t)
			got, err := NewRunner(Deps{Store: st, Embedder: embedding.NewHash()}, DefaultConfig()).RunMany(ctx, eps, "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, ignore, ignoreMS); diff != "" {
				t.Errorf("results (-Run one by one +RunMany):\n%s", diff)
			}
			for _, ep := range eps {
				a, err1 := one.ListTraces(ctx, imprint.DefaultScope(), imprint.TraceFilter{EpisodeID: ep.ID})
				b, err2 := db.ListTraces(ctx, imprint.DefaultScope(), imprint.TraceFilter{EpisodeID: ep.ID})
				if err := errors.Join(err1, err2); err != nil {
					t.Fatal(err)
				}
				if len(a) == 0 {
					t.Fatalf("episode %s has no traces", ep.ID)
				}
				if diff := cmp.Diff(a, b, ignore); diff != "" {
					t.Errorf("stored traces of %s (-one by one +many):\n%s", ep.ID, diff)
				}
			}
		})
	}
}

func TestRunManyInvalidSavesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	eps := manyEpisodes()
	eps[2].SessionID = ""
	if _, err := NewRunner(Deps{Store: db}, DefaultConfig()).RunMany(ctx, eps, ""); !errors.Is(err, imprint.ErrInvalid) {
		t.Fatalf("error %v, want ErrInvalid", err)
	}
	got, err := db.ListTraces(ctx, imprint.DefaultScope(), imprint.TraceFilter{})
	if err != nil || len(got) != 0 {
		t.Errorf("%d traces saved (%v), want none", len(got), err)
	}
}

// TestRunManyWithoutStore: with no store (a dry run) RunMany computes every
// episode, as Run does, and saves nothing.
func TestRunManyWithoutStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eps := manyEpisodes()
	r := NewRunner(Deps{}, DefaultConfig())
	got, err := r.RunMany(ctx, eps, "")
	if err != nil {
		t.Fatal(err)
	}
	var want []Result
	for _, ep := range eps {
		res, err := r.Run(ctx, ep, "")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res)
	}
	ignore := cmp.Options{cmpopts.IgnoreFields(imprint.Trace{}, "CreatedAt"), cmpopts.IgnoreFields(Result{}, "StageMS")}
	if diff := cmp.Diff(want, got, ignore); diff != "" {
		t.Errorf("results (-Run +RunMany):\n%s", diff)
	}
}
