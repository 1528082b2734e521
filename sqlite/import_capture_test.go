package sqlite

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	imprint "github.com/imprint-dev/imprint"
)

// captureFixture is three episodes with traces (vectors included), the
// second one capturing again a step of the first's episode id under a new
// step list.
func captureFixture(sc imprint.Scope) ([]imprint.Episode, [][]imprint.Trace) {
	now := imprint.Now()
	var eps []imprint.Episode
	var trs [][]imprint.Trace
	for i, steps := range []int{2, 1, 3} {
		id := fmt.Sprintf("ep%d", i%2)
		ep := imprint.Episode{ID: id, SessionID: "s", Scope: sc, Status: imprint.EpisodeFinalized, ClosedBy: imprint.ClosedFinalized,
			Turns: []imprint.Turn{{Role: imprint.RoleUser, Content: fmt.Sprintf("ask %d", i), TS: now}}, CreatedAt: now, UpdatedAt: now}
		var ts []imprint.Trace
		for k := range steps {
			ts = append(ts, imprint.Trace{ID: fmt.Sprintf("%s-t%d", id, k), StepKey: fmt.Sprint(k), StepIndex: k, TS: now,
				UserText: fmt.Sprintf("ask %d", i), AgentText: fmt.Sprintf("answer %d.%d", i, k), Alpha: 0.5, Usable: true,
				VecSummary: []float32{float32(k), 1, 0.5}, HasVecSummary: true, Embedder: "test/3"})
		}
		eps = append(eps, ep)
		trs = append(trs, ts)
	}
	return eps, trs
}

func TestSaveCapturesLikeSaveCaptureOneByOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sc := imprint.DefaultScope()
	one, many := openTemp(t), openTemp(t)
	eps, trs := captureFixture(sc)
	for i := range eps {
		if err := one.SaveCapture(ctx, eps[i], trs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := many.SaveCaptures(ctx, eps, trs); err != nil {
		t.Fatal(err)
	}
	ignore := cmpopts.IgnoreFields(imprint.Trace{}, "CreatedAt")
	want, err := one.ListTraces(ctx, sc, imprint.TraceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := many.ListTraces(ctx, sc, imprint.TraceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 4 {
		t.Fatalf("%d traces saved one by one, want 4", len(want))
	}
	if diff := cmp.Diff(want, got, ignore); diff != "" {
		t.Errorf("traces (-one by one +together):\n%s", diff)
	}
	for _, id := range []string{"ep0", "ep1"} {
		a, err1 := one.GetEpisode(ctx, sc, id)
		b, err2 := many.GetEpisode(ctx, sc, id)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a.TraceIDs, b.TraceIDs); diff != "" || len(a.Turns) != len(b.Turns) {
			t.Errorf("episode %s (-one by one +together):\n%s", id, diff)
		}
	}
	// Both are searchable by keywords and by vector alike.
	for _, db := range []*DB{one, many} {
		hits, err := db.SearchText(ctx, imprint.TextQuery{Scope: sc, Kind: imprint.KindTrace, Text: "answer", Limit: 10})
		if err != nil || len(hits) != 4 {
			t.Errorf("keyword hits %d, %v; want 4", len(hits), err)
		}
		vh, err := db.SearchVector(ctx, imprint.VectorQuery{Scope: sc, Kind: imprint.KindTrace, Vector: []float32{2, 1, 0.5}, Embedder: "test/3", Limit: 10})
		if err != nil || len(vh) != 4 {
			t.Errorf("vector hits %d, %v; want 4", len(vh), err)
		}
	}
}

func TestSaveCapturesAllOrNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sc := imprint.DefaultScope()
	for _, tc := range []struct {
		name string
		want error
		bad  func(eps []imprint.Episode, trs [][]imprint.Trace)
	}{
		{"invalid trace", imprint.ErrInvalid, func(_ []imprint.Episode, trs [][]imprint.Trace) { trs[2][1].StepKey = "" }},
		{"trace id of another episode", imprint.ErrConflict, func(_ []imprint.Episode, trs [][]imprint.Trace) { trs[2][0].ID = "ep1-t0" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := openTemp(t)
			eps, trs := captureFixture(sc)
			tc.bad(eps, trs)
			if err := db.SaveCaptures(ctx, eps, trs); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			got, err := db.ListTraces(ctx, sc, imprint.TraceFilter{})
			if err != nil || len(got) != 0 {
				t.Errorf("%d traces saved by a failed call (%v)", len(got), err)
			}
		})
	}
}
