package httpapi

import (
	"context"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestRoundsDueEnqueuesExtraction checks that a record call which reaches
// extraction.every_n_rounds queues the session's extraction job at once,
// not only at the planner's next tick.
func TestRoundsDueEnqueuesExtraction(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{}) // every 2 user rounds
	ctx := context.Background()
	res, err := e.c.Record(ctx, scopeA, "due", []imprint.Message{
		{Role: imprint.RoleUser, Content: "first request about the build"},
		{Role: imprint.RoleAssistant, Content: "done"},
		{Role: imprint.RoleUser, Content: "second request about the tests"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.SchedulerNotified {
		t.Fatalf("two user rounds did not notify the scheduler: %+v", res)
	}
	jobs, err := e.db.ListJobs(ctx, &scopeA, imprint.JobAvailable, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].Kind != imprint.JobExtract || jobs[0].SessionID != "due" {
		t.Fatalf("jobs after the due round: %+v, want one extract job of session due", jobs)
	}
}
