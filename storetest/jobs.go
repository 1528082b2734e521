package storetest

import (
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// RunService runs the conformance cases of the durable job and live episode
// methods against stores made by open (fresh, empty, migrated; the suite
// closes them). Run already includes them when its stores implement
// imprint.ServiceStore, so a backend calls one or the other.
func RunService(t *testing.T, open func(t *testing.T) imprint.ServiceStore) {
	t.Helper()
	for _, tc := range serviceTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
}

var serviceTests = []struct {
	name string
	fn   func(t *testing.T, s imprint.ServiceStore)
}{
	{"JobValidation", testJobValidation},
	{"JobUniqueKey", testJobUniqueKey},
	{"JobClaimOrder", testJobClaimOrder},
	{"JobExtractExclusive", testJobExtractExclusive},
	{"JobRetryAndFail", testJobRetryAndFail},
	{"JobReleaseAndReset", testJobReleaseAndReset},
	{"JobStatsByScope", testJobStatsByScope},
	{"JobSnooze", testJobSnooze},
	{"AppendTurnsOpensEpisode", testAppendTurns},
	{"AppendTurnsLongEpisode", testAppendTurnsLongEpisode},
	{"CloseEpisodeEnqueuesJob", testCloseEpisode},
	{"CloseEpisodeAtomic", testCloseEpisodeAtomic},
	{"SubmitEpisode", testSubmitEpisode},
	{"IdleEpisodes", testIdleEpisodes},
	{"SessionsToExtract", testSessionsToExtract},
	{"APIKeys", testAPIKeys},
}

func enqueue(t *testing.T, s imprint.ServiceStore, j imprint.Job) imprint.Job {
	t.Helper()
	got, inserted, err := s.EnqueueJob(ctxFor(t), j)
	must(t, err)
	if !inserted {
		t.Fatalf("EnqueueJob(%+v) did not insert; returned job %d", j, got.ID)
	}
	return got
}

func claim(t *testing.T, s imprint.ServiceStore, now imprint.Time, n int) []imprint.Job {
	t.Helper()
	js, err := s.ClaimJobs(ctxFor(t), now.Time, n)
	must(t, err)
	return js
}

func jobIDs(js []imprint.Job) []int64 {
	out := []int64{}
	for _, j := range js {
		out = append(out, j.ID)
	}
	return out
}

func listJobs(t *testing.T, s imprint.ServiceStore, scope *imprint.Scope, state imprint.JobState) []imprint.Job {
	t.Helper()
	js, err := s.ListJobs(ctxFor(t), scope, state, 0)
	must(t, err)
	return js
}

func testJobValidation(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	_, _, err := s.EnqueueJob(ctx, imprint.Job{Scope: scopeA, SessionID: "s"})
	wantErr(t, "EnqueueJob without kind", err, imprint.ErrInvalid)
	_, _, err = s.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobExtract, SessionID: "s"})
	wantErr(t, "EnqueueJob without scope", err, imprint.ErrInvalid)
	_, err = s.ListJobs(ctx, nil, "bogus", 10)
	wantErr(t, "ListJobs of an unknown state", err, imprint.ErrInvalid)
	wantErr(t, "CompleteJob unknown", s.CompleteJob(ctx, 424242), imprint.ErrNotFound)
	wantErr(t, "FailJob unknown", s.FailJob(ctx, 424242, "x", time.Now(), false), imprint.ErrNotFound)
	wantErr(t, "ReleaseJob unknown", s.ReleaseJob(ctx, 424242), imprint.ErrNotFound)
	if js := listJobs(t, s, nil, imprint.JobAvailable); len(js) != 0 {
		t.Errorf("invalid enqueues left jobs: %+v", js)
	}
}

func testJobUniqueKey(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	key := imprint.ExtractJobKey(scopeA, "s1")
	first := enqueue(t, s, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", UniqueKey: key, RunAt: at(0)})
	if first.ID == 0 || first.State != imprint.JobAvailable || first.MaxAttempts <= 0 || first.Attempts != 0 {
		t.Errorf("enqueued job = %+v, want an id, state available, max attempts > 0, no attempts", first)
	}
	// While the job is unfinished (available, then running) the key dedupes.
	for _, phase := range []string{"available", "running"} {
		again, inserted, err := s.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", UniqueKey: key})
		must(t, err)
		if inserted || again.ID != first.ID {
			t.Errorf("%s: second enqueue with the same key: inserted %v, id %d, want the existing job %d", phase, inserted, again.ID, first.ID)
		}
		if phase == "available" {
			if got := claim(t, s, at(1), 10); len(got) != 1 {
				t.Fatalf("claimed %d jobs, want 1", len(got))
			}
		}
	}
	// A job without a key never dedupes.
	enqueue(t, s, imprint.Job{Kind: imprint.JobEmbed, Scope: scopeA})
	enqueue(t, s, imprint.Job{Kind: imprint.JobEmbed, Scope: scopeA})
	// A finished job frees its key.
	must(t, s.CompleteJob(ctx, first.ID))
	next := enqueue(t, s, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", UniqueKey: key})
	if next.ID == first.ID {
		t.Errorf("enqueue after completion returned the completed job")
	}
	claimed := claim(t, s, imprint.Now(), 10)
	var got *imprint.Job
	for i := range claimed {
		if claimed[i].ID == next.ID {
			got = &claimed[i]
		}
	}
	if got == nil {
		t.Fatalf("the new extract job was not claimed: %v", jobIDs(claimed))
	}
	must(t, s.FailJob(ctx, next.ID, "boom", time.Now(), true))
	enqueue(t, s, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", UniqueKey: key})
}

func testJobClaimOrder(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	late := enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeA, EpisodeID: "e5", RunAt: at(5)})
	early := enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeB, EpisodeID: "e1", RunAt: at(1)})
	mid := enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeC, EpisodeID: "e3", RunAt: at(3)})
	future := enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeA, EpisodeID: "e100", RunAt: at(100)})

	if got := claim(t, s, at(0), 10); len(got) != 0 {
		t.Errorf("claim before any run_at got %v", jobIDs(got))
	}
	one := claim(t, s, at(10), 1)
	if d := diff([]int64{early.ID}, jobIDs(one)); d != "" {
		t.Errorf("claim 1 (-want +got):\n%s", d)
	}
	rest := claim(t, s, at(10), 10)
	if d := diff([]int64{mid.ID, late.ID}, jobIDs(rest)); d != "" {
		t.Errorf("claim rest, oldest run_at first (-want +got):\n%s", d)
	}
	for _, j := range append(one, rest...) {
		if j.State != imprint.JobRunning || j.Attempts != 1 {
			t.Errorf("claimed job %d: state %q attempts %d, want running 1", j.ID, j.State, j.Attempts)
		}
	}
	if got := claim(t, s, at(10), 10); len(got) != 0 {
		t.Errorf("running jobs were claimed again: %v", jobIDs(got))
	}
	running := listJobs(t, s, nil, imprint.JobRunning)
	if len(running) != 3 {
		t.Errorf("ListJobs(running) = %v, want 3 jobs", jobIDs(running))
	}
	if got := claim(t, s, at(100), 10); len(got) != 1 || got[0].ID != future.ID || got[0].EpisodeID != "e100" || got[0].Scope != scopeA {
		t.Errorf("claim at the future job's time = %+v, want job %d of scope A, episode e100", got, future.ID)
	}
	must(t, s.CompleteJob(ctx, early.ID))
	wantErr(t, "CompleteJob twice", s.CompleteJob(ctx, early.ID), imprint.ErrConflict)
	if got := listJobs(t, s, nil, imprint.JobCompleted); len(got) != 1 || got[0].ID != early.ID {
		t.Errorf("ListJobs(completed) = %v, want [%d]", jobIDs(got), early.ID)
	}
}

func testJobExtractExclusive(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	// Two extract jobs of one session (no unique key), one of another
	// session, one of the same session id in another scope, and a capture
	// job of the first session.
	a1 := enqueue(t, s, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", RunAt: at(0)})
	a2 := enqueue(t, s, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", RunAt: at(1)})
	other := enqueue(t, s, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s2", RunAt: at(2)})
	b1 := enqueue(t, s, imprint.Job{Kind: imprint.JobExtract, Scope: scopeB, SessionID: "s1", RunAt: at(3)})
	capture := enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeA, SessionID: "s1", EpisodeID: "e", RunAt: at(4)})

	got := claim(t, s, at(10), 10)
	if d := diff([]int64{a1.ID, other.ID, b1.ID, capture.ID}, jobIDs(got)); d != "" {
		t.Errorf("first claim (-want +got):\n%s", d)
	}
	if got := claim(t, s, at(10), 10); len(got) != 0 {
		t.Errorf("an extract job was claimed while its session's extraction runs: %v", jobIDs(got))
	}
	must(t, s.CompleteJob(ctx, a1.ID))
	if got := claim(t, s, at(10), 10); len(got) != 1 || got[0].ID != a2.ID {
		t.Errorf("claim after the first extraction finished = %v, want [%d]", jobIDs(got), a2.ID)
	}
}

func testJobRetryAndFail(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	j := enqueue(t, s, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", MaxAttempts: 2, RunAt: at(0)})
	if j.MaxAttempts != 2 {
		t.Errorf("MaxAttempts = %d, want 2 as given", j.MaxAttempts)
	}
	claim(t, s, at(0), 1)
	must(t, s.FailJob(ctx, j.ID, "llm_timeout: first", at(20).Time, false))
	retry := listJobs(t, s, &scopeA, imprint.JobRetryable)
	if len(retry) != 1 || retry[0].LastError != "llm_timeout: first" || !retry[0].RunAt.Equal(at(20).Time) || retry[0].Attempts != 1 {
		t.Fatalf("retryable jobs = %+v, want job %d with its error, run_at %s, 1 attempt", retry, j.ID, at(20))
	}
	if got := claim(t, s, at(19), 1); len(got) != 0 {
		t.Errorf("a retryable job was claimed before its retry time")
	}
	got := claim(t, s, at(20), 1)
	if len(got) != 1 || got[0].Attempts != 2 || got[0].LastError != "llm_timeout: first" {
		t.Fatalf("retry claim = %+v, want attempt 2 keeping the last error", got)
	}
	wantErr(t, "FailJob of an unknown job", s.FailJob(ctx, j.ID+1000, "x", time.Now(), true), imprint.ErrNotFound)
	must(t, s.FailJob(ctx, j.ID, "llm_timeout: second", time.Time{}, true))
	failed := listJobs(t, s, &scopeA, imprint.JobFailed)
	if len(failed) != 1 || failed[0].ID != j.ID || failed[0].LastError != "llm_timeout: second" || failed[0].Attempts != 2 {
		t.Errorf("failed jobs = %+v, want job %d with the last error and 2 attempts", failed, j.ID)
	}
	if got := claim(t, s, at(1000), 10); len(got) != 0 {
		t.Errorf("a failed job was claimed: %v", jobIDs(got))
	}
	wantErr(t, "CompleteJob of a failed job", s.CompleteJob(ctx, j.ID), imprint.ErrConflict)
	wantErr(t, "ReleaseJob of a failed job", s.ReleaseJob(ctx, j.ID), imprint.ErrConflict)
}

func testJobReleaseAndReset(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	j1 := enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeA, EpisodeID: "e1", RunAt: at(0)})
	j2 := enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeA, EpisodeID: "e2", RunAt: at(1)})
	j3 := enqueue(t, s, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s", RunAt: at(2)})

	claim(t, s, at(0), 1)
	must(t, s.ReleaseJob(ctx, j1.ID))
	avail := listJobs(t, s, &scopeA, imprint.JobAvailable)
	if len(avail) != 3 {
		t.Fatalf("available after release = %v, want 3 jobs", jobIDs(avail))
	}
	for _, j := range avail {
		if j.ID == j1.ID && j.Attempts != 0 {
			t.Errorf("released job has %d attempts, want 0 (the release does not count)", j.Attempts)
		}
	}
	wantErr(t, "ReleaseJob of an available job", s.ReleaseJob(ctx, j1.ID), imprint.ErrConflict)

	// A crashed process left every job running.
	if got := claim(t, s, at(10), 10); len(got) != 3 {
		t.Fatalf("claimed %v, want all 3", jobIDs(got))
	}
	n, err := s.ResetRunningJobs(ctx)
	must(t, err)
	if n != 3 {
		t.Errorf("ResetRunningJobs = %d, want 3", n)
	}
	if got := listJobs(t, s, nil, imprint.JobRunning); len(got) != 0 {
		t.Errorf("running after reset: %v", jobIDs(got))
	}
	again := claim(t, s, at(10), 10)
	if d := diff([]int64{j1.ID, j2.ID, j3.ID}, jobIDs(again)); d != "" {
		t.Errorf("claim after reset (-want +got):\n%s", d)
	}
	for _, j := range again {
		if j.Attempts != 2 {
			t.Errorf("job %d after a crash and a new claim has %d attempts, want 2", j.ID, j.Attempts)
		}
	}
	n, err = s.ResetRunningJobs(ctx)
	must(t, err)
	if n != 3 {
		t.Errorf("second ResetRunningJobs = %d, want 3", n)
	}
}

func testJobStatsByScope(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	// Scope A: one of each state; scope B: two available.
	for i := range 5 {
		enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeA, EpisodeID: "a", RunAt: at(i)})
	}
	enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeB, RunAt: at(100)})
	enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeB, RunAt: at(101)})
	got := claim(t, s, at(10), 4) // scope A's jobs 0..3
	if len(got) != 4 {
		t.Fatalf("claimed %d, want 4", len(got))
	}
	must(t, s.CompleteJob(ctx, got[0].ID))
	must(t, s.FailJob(ctx, got[1].ID, "x", at(50).Time, false))
	must(t, s.FailJob(ctx, got[2].ID, "gave up", at(50).Time, true))

	stats := func(sc *imprint.Scope) imprint.JobStats {
		st, err := s.JobStats(ctx, sc)
		must(t, err)
		return st
	}
	if d := diff(imprint.JobStats{Available: 1, Running: 1, Retryable: 1, Failed: 1}, stats(&scopeA)); d != "" {
		t.Errorf("JobStats(A) (-want +got):\n%s", d)
	}
	if d := diff(imprint.JobStats{Available: 2}, stats(&scopeB)); d != "" {
		t.Errorf("JobStats(B) (-want +got):\n%s", d)
	}
	if d := diff(imprint.JobStats{}, stats(&scopeC)); d != "" {
		t.Errorf("JobStats(C) (-want +got):\n%s", d)
	}
	if d := diff(imprint.JobStats{Available: 3, Running: 1, Retryable: 1, Failed: 1}, stats(nil)); d != "" {
		t.Errorf("JobStats(all) (-want +got):\n%s", d)
	}
	_, err := s.JobStats(ctx, &imprint.Scope{Tenant: "x"})
	wantErr(t, "JobStats of a partial scope", err, imprint.ErrInvalid)
	if got := listJobs(t, s, &scopeB, imprint.JobFailed); len(got) != 0 {
		t.Errorf("ListJobs(B, failed) shows another scope's jobs: %+v", got)
	}
	avail := listJobs(t, s, nil, imprint.JobAvailable)
	if len(avail) != 3 || avail[0].ID < avail[1].ID || avail[1].ID < avail[2].ID {
		t.Errorf("ListJobs(all, available) = %v, want 3 jobs newest first", jobIDs(avail))
	}
	limited, err := s.ListJobs(ctx, nil, imprint.JobAvailable, 1)
	must(t, err)
	if len(limited) != 1 || limited[0].ID != avail[0].ID {
		t.Errorf("ListJobs limit 1 = %v, want the newest %d", jobIDs(limited), avail[0].ID)
	}
}

// testJobSnooze checks that a snoozed job waits until its new time with
// its attempt not counted.
func testJobSnooze(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	j := enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeA, EpisodeID: "ep-1", RunAt: at(0)})
	if got := claim(t, s, at(1), 10); len(got) != 1 || got[0].Attempts != 1 {
		t.Fatalf("claimed %+v, want the job at attempt 1", got)
	}
	must(t, s.SnoozeJob(ctx, j.ID, at(30).Time))
	wantErr(t, "SnoozeJob of a job no longer running", s.SnoozeJob(ctx, j.ID, at(30).Time), imprint.ErrConflict)
	wantErr(t, "SnoozeJob unknown", s.SnoozeJob(ctx, 424242, at(30).Time), imprint.ErrNotFound)
	if got := claim(t, s, at(29), 10); len(got) != 0 {
		t.Errorf("a snoozed job was claimed before its time: %v", jobIDs(got))
	}
	got := claim(t, s, at(31), 10)
	if len(got) != 1 || got[0].ID != j.ID || got[0].Attempts != 1 {
		t.Errorf("claimed after the snooze %+v, want job %d at attempt 1 again", got, j.ID)
	}
}
