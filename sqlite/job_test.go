package sqlite

import (
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// TestServiceQueriesUseIndexes checks with EXPLAIN QUERY PLAN that the job
// and live-episode statements, which run on every poll and append, never
// scan a table.
func TestServiceQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	defer db.Close()
	sc := scopeWhere("")
	for _, tc := range []struct {
		q    string
		args []any
	}{
		{readyQuery, []any{"2026", 10}},
		{`SELECT EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_ready WHERE state IN ('available', 'retryable') AND run_at <= ?)`, []any{"2026"}},
		{`SELECT ` + jobCols + ` FROM jobs WHERE unique_key = ? AND unique_key <> '' AND state IN ` + unfinishedStates, []any{"k"}},
		{`UPDATE jobs SET state = 'available' WHERE state = 'running'`, nil},
		{`UPDATE jobs SET state = 'completed' WHERE id = ? AND state = 'running'`, []any{1}},
		{`SELECT state, COUNT(*) FROM jobs WHERE state IN ('available', 'running', 'retryable', 'failed') AND ` + sc + ` GROUP BY state`, scopeArgs(imprint.DefaultScope())},
		{`SELECT state, COUNT(*) FROM jobs WHERE state IN ('available', 'running', 'retryable', 'failed') GROUP BY state`, nil},
		{`SELECT ` + jobCols + ` FROM jobs WHERE state = ? AND ` + sc + ` ORDER BY id DESC LIMIT ?`, append([]any{"failed"}, append(scopeArgs(imprint.DefaultScope()), 10)...)},
		{`SELECT ` + jobCols + ` FROM jobs WHERE state = ? ORDER BY id DESC LIMIT ?`, []any{"failed", 10}},
		{openEpisodeQuery, append(scopeArgs(imprint.DefaultScope()), "s")},
		{`SELECT ` + episodeCols + ` FROM episodes WHERE status = 'open' AND updated_at < ? ORDER BY updated_at, id LIMIT ?`, []any{"2026", 10}},
		{`SELECT ` + sessionCols + ` FROM sessions WHERE extraction_due = 1 AND last_seq > cursor_seq ORDER BY last_message_at, rid LIMIT ?`, []any{10}},
		{`SELECT ` + sessionCols + ` FROM sessions WHERE last_seq > cursor_seq AND last_message_at < ? ORDER BY last_message_at, rid LIMIT ?`, []any{"2026", 10}},
	} {
		rows, err := db.r.QueryContext(t.Context(), `EXPLAIN QUERY PLAN `+tc.q, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN ") && step != "SCAN CONSTANT ROW" {
				t.Errorf("%s\n  scans a table: %v", tc.q, plan)
			}
		}
		if testing.Verbose() {
			t.Logf("%.60s: %v", strings.Join(strings.Fields(tc.q), " "), plan)
		}
	}
}

// TestMigrationBackfillsSessionActivity checks that sessions recorded before
// migration 0002 are found by SessionsToExtract after it.
func TestMigrationBackfillsSessionActivity(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openTemp(t)
	defer db.Close()
	if _, err := db.AppendMessages(ctx, imprint.DefaultScope(), "old", []imprint.Message{
		{ID: "m1", Role: imprint.RoleUser, Content: "recorded before 0002"},
		{ID: "m2", Role: imprint.RoleAssistant, Content: "noted"},
	}); err != nil {
		t.Fatal(err)
	}
	// Forget what AppendMessages maintained, then rerun the backfill.
	if _, err := db.w.ExecContext(ctx, `UPDATE sessions SET last_seq = 0, last_message_at = ''`); err != nil {
		t.Fatal(err)
	}
	body, err := migrationFiles.ReadFile("migrations/0002_jobs.sql")
	if err != nil {
		t.Fatal(err)
	}
	_, backfill, ok := strings.Cut(string(body), "UPDATE sessions SET")
	if !ok {
		t.Fatal("0002 has no session backfill")
	}
	backfill, _, _ = strings.Cut(backfill, ";")
	if _, err := db.w.ExecContext(ctx, "UPDATE sessions SET"+backfill); err != nil {
		t.Fatal(err)
	}
	var lastSeq int64
	var lastAt string
	if err := db.r.QueryRowContext(ctx, `SELECT last_seq, last_message_at FROM sessions WHERE id = 'old'`).Scan(&lastSeq, &lastAt); err != nil {
		t.Fatal(err)
	}
	pend, err := db.PendingMessages(ctx, imprint.DefaultScope(), "old", 0)
	if err != nil {
		t.Fatal(err)
	}
	if lastSeq != pend[1].Seq || lastAt != pend[1].RecordedAt.String() {
		t.Errorf("backfilled last_seq %d at %q, want %d at %q", lastSeq, lastAt, pend[1].Seq, pend[1].RecordedAt)
	}
}

// BenchmarkJobCycle measures one job's life on the store: enqueue, claim,
// complete.
func BenchmarkJobCycle(b *testing.B) {
	db := openTemp(b)
	defer db.Close()
	ctx := b.Context()
	sc := imprint.DefaultScope()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := db.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobCapture, Scope: sc, EpisodeID: "e"}); err != nil {
			b.Fatal(err)
		}
		js, err := db.ClaimJobs(ctx, time.Now(), 1)
		if err != nil || len(js) != 1 {
			b.Fatalf("claim: %v, %v", js, err)
		}
		if err := db.CompleteJob(ctx, js[0].ID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClaimIdle measures a poll that finds nothing to do, with many
// jobs scheduled later.
func BenchmarkClaimIdle(b *testing.B) {
	db := openTemp(b)
	defer db.Close()
	ctx := b.Context()
	later := imprint.At(time.Now().Add(time.Hour))
	for range 1000 {
		if _, _, err := db.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobEmbed, Scope: imprint.DefaultScope(), RunAt: later}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if js, err := db.ClaimJobs(ctx, time.Now(), 2); err != nil || len(js) != 0 {
			b.Fatalf("claim: %v, %v", js, err)
		}
	}
}

// BenchmarkAppendTurns measures appending 5 turns to a session's open
// episode as it grows to 200 turns, then starting over in a new episode.
func BenchmarkAppendTurns(b *testing.B) {
	db := openTemp(b)
	defer db.Close()
	ctx := b.Context()
	sc := imprint.DefaultScope()
	turns := make([]imprint.Turn, 5)
	for i := range turns {
		turns[i] = imprint.Turn{Role: imprint.RoleAssistant, Content: strings.Repeat("a reply of moderate length ", 10), TS: imprint.Now()}
	}
	b.ResetTimer()
	for b.Loop() {
		ep, err := db.AppendTurns(ctx, sc, "s", turns, imprint.NewID())
		if err != nil {
			b.Fatal(err)
		}
		if len(ep.Turns) >= 200 {
			if _, err := db.CloseEpisode(ctx, sc, ep.ID, imprint.ClosedFinalized, &imprint.Job{Kind: imprint.JobCapture}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
