package ingest

import (
	"context"
	"errors"
	"testing"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/sqlite"
)

// storeJobs is the store's own job queue (what the scheduler enqueues
// into), as a Jobs.
type storeJobs struct{ db *sqlite.DB }

func (j storeJobs) Enqueue(ctx context.Context, job imprint.Job) (imprint.Job, error) {
	got, _, err := j.db.EnqueueJob(ctx, job)
	return got, err
}

// jobKeys returns the unique keys of the available jobs of scope.
func jobKeys(t *testing.T, db *sqlite.DB, scope imprint.Scope) []string {
	t.Helper()
	js, err := db.ListJobs(t.Context(), &scope, imprint.JobAvailable, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, j := range js {
		out = append(out, j.UniqueKey)
	}
	return out
}

// Live turns recorded through the TurnRecorder queue the session's
// extraction once extraction.every_n_rounds user rounds have gathered,
// not before, and only once however many rounds follow (the job is the
// session's); records stored without a vector queue the scope's embedding
// retry, once. Another scope's session queues nothing in ana's scope.
func TestRecordedTurnsQueueWhatIsDue(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	tr := tauTranscripts(t)[0]
	const rounds = 3
	rec := record.NewRecorder(record.Deps{Store: db}, record.Config{EveryNRounds: rounds})
	due := &Due{Jobs: storeJobs{db}, Embedding: true}
	var counted int
	turns := &TurnRecorder{Recorder: rec, Ingest: due, Count: func(n int) { counted += n }}

	users := 0
	extractKey := imprint.ExtractJobKey(ana, tr.SessionID)
	embedKey := imprint.EmbedJobKey(ana)
	for i, m := range tr.Messages {
		if err := turns.RecordTurns(t.Context(), ana, tr.SessionID, []imprint.Message{m}); err != nil {
			t.Fatal(err)
		}
		if m.Role == imprint.RoleUser {
			users++
		}
		keys := map[string]int{}
		for _, k := range jobKeys(t, db, ana) {
			keys[k]++
		}
		if want := users >= rounds; (keys[extractKey] == 1) != want || keys[extractKey] > 1 {
			t.Fatalf("after message %d (%d user rounds): extraction queued %d times, want due=%v", i+1, users, keys[extractKey], want)
		}
		if keys[embedKey] != 1 || len(keys) > 2 {
			t.Fatalf("after message %d: jobs %v, want one embedding retry of the scope", i+1, keys)
		}
	}
	if users < rounds+2 {
		t.Fatalf("the transcript has %d user messages; the test needs more than %d", users, rounds)
	}
	if counted != len(tr.Messages) {
		t.Errorf("counted %d recorded messages, want %d", counted, len(tr.Messages))
	}
	if got := jobKeys(t, db, bob); len(got) != 0 {
		t.Errorf("jobs in another scope: %v", got)
	}

	// ExtractSession queues the same job (joined), and without a queue it
	// says so.
	if err := due.ExtractSession(t.Context(), ana, tr.SessionID); err != nil {
		t.Fatal(err)
	}
	if n := len(jobKeys(t, db, ana)); n != 2 {
		t.Errorf("%d jobs after ExtractSession of a queued session, want the 2 already there", n)
	}
	if err := (&Due{}).ExtractSession(t.Context(), ana, tr.SessionID); !errors.Is(err, imprint.ErrUnavailable) {
		t.Errorf("ExtractSession without a job queue = %v, want ErrUnavailable", err)
	}
}
