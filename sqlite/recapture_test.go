package sqlite

import (
	"context"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestRecaptureKeepsLearnedScores checks that capturing an episode again
// rewrites what capture computes but keeps value, priority and r_human,
// which later stages learn.
func TestRecaptureKeepsLearnedScores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	sc := imprint.DefaultScope()
	now := imprint.Now()
	ep := imprint.Episode{ID: "ep1", SessionID: "s", Scope: sc, Status: imprint.EpisodeFinalized,
		Turns: []imprint.Turn{{Role: imprint.RoleUser, Content: "hi", TS: now}}, CreatedAt: now, UpdatedAt: now}
	tr := imprint.Trace{ID: "t1", StepKey: "0", UserText: "hi", AgentText: "hello", Alpha: 0.5, Usable: true, TS: now}
	if err := db.SaveCapture(ctx, ep, []imprint.Trace{tr}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `UPDATE traces SET value = 0.7, priority = 2.5, r_human = 1 WHERE id = 't1'`); err != nil {
		t.Fatal(err)
	}
	tr.AgentText, tr.Alpha = "hello again", 0.9
	if err := db.SaveCapture(ctx, ep, []imprint.Trace{tr}); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetTrace(ctx, sc, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got.AgentText != "hello again" || got.Alpha != 0.9 {
		t.Errorf("re-capture did not rewrite the step: %+v", got)
	}
	if got.Value != 0.7 || got.Priority != 2.5 || got.RHuman == nil || *got.RHuman != 1 {
		t.Errorf("re-capture reset learned scores: value %v priority %v r_human %v", got.Value, got.Priority, got.RHuman)
	}
}
