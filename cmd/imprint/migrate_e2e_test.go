package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/internal/pgtest"
	"github.com/imprint-dev/imprint/postgres"
	"github.com/imprint-dev/imprint/schedule"
	"github.com/imprint-dev/imprint/sqlite"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// migrateSource imports the shipped LoCoMo and τ-bench test data into a
// fresh data dir's SQLite store with the built binary and returns the
// data dir.
func migrateSource(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	r := runBin(t, map[string]string{"IMPRINT_DATA_DIR": dir}, "", "import",
		sharedFile(t, "locomo/locomo-2conv.json"), sharedFile(t, "tau-bench/airline-40.json"))
	if r.code != 0 {
		t.Fatalf("import: exit %d: %s", r.code, r.stderr)
	}
	return dir
}

// listings are the outputs a user compares before and after a migration.
var listings = [][]string{
	{"memories", "--limit", "1000"},
	{"memories", "--all-versions", "--limit", "1000"},
	{"traces", "--limit", "1000"},
	{"memories", "--json", "--limit", "1000"},
	{"traces", "--json", "--limit", "1000"},
}

// searches are the queries of the search comparison.
var searches = []string{"support group", "refund for my flight", "painting", "cancel reservation", "Caroline adoption"}

func outputs(t *testing.T, env map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, args := range listings {
		r := runBin(t, env, "", args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		out[strings.Join(args, " ")] = r.stdout
	}
	return out
}

// searchHits runs each query with --json and returns its hits by query.
func searchHits(t *testing.T, env map[string]string, limit string) map[string][]imprint.Hit {
	t.Helper()
	out := map[string][]imprint.Hit{}
	for _, q := range searches {
		r := runBin(t, env, "", "search", "--json", "--limit", limit, q)
		if r.code != 0 {
			t.Fatalf("search %q: exit %d: %s", q, r.code, r.stderr)
		}
		out[q] = jsonLines[imprint.Hit](t, r)
	}
	return out
}

// overlap is how many of the hits a are among the hits b.
func overlap(a, b []imprint.Hit) int {
	in := map[string]bool{}
	for _, h := range b {
		in[string(h.Kind)+" "+h.ID] = true
	}
	n := 0
	for _, h := range a {
		if in[string(h.Kind)+" "+h.ID] {
			n++
		}
	}
	return n
}

// samePlaces counts, by kind, the places where a and b hold the same hit.
func samePlaces(a, b []imprint.Hit) map[imprint.Kind]int {
	n := map[imprint.Kind]int{}
	for i := range min(len(a), len(b)) {
		if a[i].Kind == b[i].Kind && a[i].ID == b[i].ID {
			n[a[i].Kind]++
		}
	}
	return n
}

// firstMemories is the ids of the first n memory hits.
func firstMemories(hs []imprint.Hit, n int) []string {
	var out []string
	for _, h := range hs {
		if h.Kind == imprint.KindMemory && len(out) < n {
			out = append(out, h.ID)
		}
	}
	return out
}

// storeDump reads every record of a store with its Dumper (ids, texts,
// vectors, version chains), for comparing a copy with its source.
func storeDump(t *testing.T, d imprint.Dumper) map[string]any {
	t.Helper()
	ctx := t.Context()
	all := map[string]any{}
	var sessions []imprint.SessionState
	var messages []imprint.Message
	var memories []imprint.Memory
	var captures []imprint.Capture
	for after := ""; ; {
		p, next, err := d.DumpSessions(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		sessions, after = append(sessions, p...), next
		if len(p) < 1000 {
			break
		}
	}
	for after := ""; ; {
		p, next, err := d.DumpMessages(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		messages, after = append(messages, p...), next
		if len(p) < 1000 {
			break
		}
	}
	for after := ""; ; {
		p, next, err := d.DumpMemories(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		memories, after = append(memories, p...), next
		if len(p) < 1000 {
			break
		}
	}
	for after := ""; ; {
		p, next, err := d.DumpCaptures(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		captures, after = append(captures, p...), next
		if len(p) < 1000 {
			break
		}
	}
	// Vectors are compared as their bits, in one string each (a
	// field-by-field diff of a million floats is slow).
	vecs := map[string]string{}
	bits := func(v []float32) string {
		var b strings.Builder
		for _, f := range v {
			fmt.Fprintf(&b, "%08x", math.Float32bits(f))
		}
		return b.String()
	}
	for i, m := range messages {
		vecs["message "+m.SessionID+" "+m.ID] = m.Embedder + " " + bits(m.Vec)
		messages[i].Vec = nil
	}
	for i, m := range memories {
		vecs["memory "+m.ID] = m.Embedder + " " + m.ContentHash + " " + bits(m.Vec)
		memories[i].Vec = nil
	}
	for _, c := range captures {
		for i, tr := range c.Traces {
			vecs["trace "+tr.ID] = tr.Embedder + " " + bits(tr.VecSummary) + " " + bits(tr.VecAction)
			c.Traces[i].VecSummary, c.Traces[i].VecAction = nil, nil
		}
	}
	// The records as JSON lines (what cmp reads fast), with the cursor's
	// message id; sessions and episodes sorted by id (the target makes
	// sessions as their messages arrive, and orders episodes by id).
	lines := func(n int, line func(i int) any) []string {
		out := make([]string, n)
		for i := range out {
			b, err := json.Marshal(line(i))
			if err != nil {
				t.Fatal(err)
			}
			out[i] = string(b)
		}
		return out
	}
	all["sessions"] = sorted(lines(len(sessions), func(i int) any { return sessions[i] }))
	all["messages"] = lines(len(messages), func(i int) any { return messages[i] })
	all["memories"] = lines(len(memories), func(i int) any { return memories[i] })
	all["captures"] = sorted(lines(len(captures), func(i int) any { return captures[i] }))
	all["vectors"] = vecs
	return all
}

func sorted(s []string) []string { slices.Sort(s); return s }

func openDumpers(t *testing.T, dataDir, url string) (imprint.Dumper, imprint.Dumper) {
	t.Helper()
	src, err := sqlite.Open(t.Context(), filepath.Join(dataDir, "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	dst, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dst.Close() })
	return src, dst
}

// TestMigrateToPostgres imports the shipped test data into SQLite with the
// built binary, records what memories and traces print (text and --json)
// and what search finds, migrates to PostgreSQL, and runs the same
// commands on PostgreSQL: the listings are the same, byte for byte, and
// so is every record (ids, vectors, version chains, cursors); a second run
// says the migration is done and writes nothing; after a memory is added
// to SQLite a run is refused (exit 2) and writes nothing.
func TestMigrateToPostgres(t *testing.T) {
	url := pgtest.Schema(t)
	t.Parallel()
	dir := migrateSource(t)
	local := map[string]string{"IMPRINT_DATA_DIR": dir}
	before := outputs(t, local)
	beforeHits := searchHits(t, local, "10")

	dry := runBin(t, local, "", "migrate", "--to", url, "--dry-run", "--json")
	var dst curate.MigrateStats
	if dry.code != 0 || json.Unmarshal([]byte(dry.stdout), &dst) != nil || !dst.DryRun || dst.Source.Messages == 0 || dst.Copied.Messages != 0 {
		t.Fatalf("migrate --dry-run: exit %d: %s %s", dry.code, dry.stdout, dry.stderr)
	}
	r := runBin(t, local, "", "migrate", "--to", url)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "migrated ") || !strings.Contains(r.stderr, "migrate messages") {
		t.Fatalf("migrate: exit %d: stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	pg := map[string]string{"IMPRINT_DATA_DIR": t.TempDir(), "IMPRINT_STORE": url}
	after := outputs(t, pg)
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("listings differ after the migration (-sqlite +postgres):\n%s", d)
	}
	src, cp := openDumpers(t, dir, url)
	if d := cmp.Diff(storeDump(t, src), storeDump(t, cp)); d != "" {
		t.Errorf("records differ after the migration (-sqlite +postgres):\n%s", d)
	}
	// Search: every hit found on PostgreSQL is a record of the source with
	// the same text, session, episode and sources. (The order of hits
	// differs where the backends' keyword rankings do: see
	// docs/postgres.md.)
	known := map[string]imprint.Hit{}
	for _, hs := range searchHits(t, local, "2000") {
		for _, h := range hs {
			h.Score = 0
			known[string(h.Kind)+" "+h.ID] = h
		}
	}
	for q, hs := range searchHits(t, pg, "10") {
		t.Logf("search %q: top-10 overlap %d/%d; same position: %v", q, overlap(hs, beforeHits[q]), len(hs), samePlaces(hs, beforeHits[q]))
		// Both stores rank memories by BM25 (PostgreSQL's an estimate of
		// it): the top hit and the first three memory hits are the same,
		// in order. Traces and messages are ranked on more columns and
		// context, where the estimate parts more often: see docs/postgres.md.
		if m, w := firstMemories(hs, 3), firstMemories(beforeHits[q], 3); len(hs) == 0 || len(beforeHits[q]) == 0 ||
			hs[0].ID != beforeHits[q][0].ID || !slices.Equal(m, w) {
			t.Errorf("search %q: top hit or first memories differ: postgres %v, sqlite %v", q, m, w)
		}
		if len(hs) != len(beforeHits[q]) {
			t.Errorf("search %q: %d hits on postgres, %d on sqlite", q, len(hs), len(beforeHits[q]))
		}
		for _, h := range hs {
			h.Score = 0
			if d := cmp.Diff(known[string(h.Kind)+" "+h.ID], h, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("search %q: hit differs from the source's record (-sqlite +postgres):\n%s", q, d)
			}
		}
	}

	again := runBin(t, local, "", "migrate", "--to", url)
	if again.code != 0 || !strings.HasPrefix(again.stdout, "already migrated") {
		t.Errorf("second migrate: exit %d: %s %s", again.code, again.stdout, again.stderr)
	}
	// A memory added to SQLite after the migration finished: run again,
	// the migration is refused, naming it, and PostgreSQL is left as it
	// was.
	if r := runBin(t, local, "", "remember", "Ada moved her hives to the roof"); r.code != 0 {
		t.Fatalf("remember: exit %d: %s", r.code, r.stderr)
	}
	changed := runBin(t, local, "", "migrate", "--to", url)
	if changed.code != 2 || !strings.Contains(changed.stderr, "1 memory versions the target lacks") {
		t.Errorf("migrate after the source changed: exit %d: %s %s; want exit 2 naming the new memory version", changed.code, changed.stdout, changed.stderr)
	}
	if d := cmp.Diff(after, outputs(t, pg)); d != "" {
		t.Errorf("the refused migration changed the target (-before +after):\n%s", d)
	}
}

// TestMigrateKilledResumes kill -9s the binary in the middle of a
// migration and runs it again: it says it resumed, and the copy holds
// exactly the source's records (no duplicate, none missing).
func TestMigrateKilledResumes(t *testing.T) {
	url := pgtest.Schema(t)
	t.Parallel()
	dir := migrateSource(t)
	cmd := exec.Command(imprintBin(t), "migrate", "--to", url)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "IMPRINT_DATA_DIR=" + dir}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		// The first page of messages is written and marked: kill now.
		if strings.Contains(sc.Text(), "migrate messages") {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	err = cmd.Wait()
	if ee := (*exec.ExitError)(nil); !asExit(err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("migrate was not killed mid-way (%v): the test needs it cut off", err)
	}
	r := runBin(t, map[string]string{"IMPRINT_DATA_DIR": dir}, "", "migrate", "--to", url, "--json")
	var st curate.MigrateStats
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
		t.Fatalf("resume: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if !st.Resumed || st.Copied.Messages >= st.Source.Messages {
		t.Errorf("resume stats %+v: want resumed, with fewer messages than the source's %d left to write", st, st.Source.Messages)
	}
	src, cp := openDumpers(t, dir, url)
	if d := cmp.Diff(storeDump(t, src), storeDump(t, cp)); d != "" {
		t.Errorf("records differ after the resumed migration (-sqlite +postgres):\n%s", d)
	}
	if a, b := get(src.DumpCounts(t.Context()))(t), get(cp.DumpCounts(t.Context()))(t); a != b {
		t.Errorf("counts: source %+v, copy %+v", a, b)
	}
}

// TestMigrateRefuses: a target holding other records, a --to that is not
// a PostgreSQL URL and a data dir without a store are refused with exit 2
// and a message saying why; the refused target is left as it was.
func TestMigrateRefuses(t *testing.T) {
	url := pgtest.Schema(t)
	t.Parallel()
	// The target holds a record of its own.
	pg := map[string]string{"IMPRINT_DATA_DIR": t.TempDir(), "IMPRINT_STORE": url}
	if r := runBin(t, pg, "", "remember", "the target's own memory"); r.code != 0 {
		t.Fatalf("remember: exit %d: %s", r.code, r.stderr)
	}
	dir := t.TempDir()
	local := map[string]string{"IMPRINT_DATA_DIR": dir}
	if r := runBin(t, local, "", "remember", "the source's memory"); r.code != 0 {
		t.Fatalf("remember: exit %d: %s", r.code, r.stderr)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"non-empty target", local, []string{"--to", url}, "not empty"},
		{"not a postgres url", local, []string{"--to", "mysql://x"}, "want a postgres:// URL"},
		{"malformed url", local, []string{"--to", "postgres://u@[::1"}, "postgres url"},
		{"no source", map[string]string{"IMPRINT_DATA_DIR": t.TempDir()}, []string{"--to", url}, "no SQLite store to copy"},
	}
	for _, tc := range tests {
		r := runBin(t, tc.env, "", append([]string{"migrate"}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying %q", tc.name, r.code, r.stderr, tc.want)
		}
	}
	r := runBin(t, pg, "", "memories", "--json")
	if ms := jsonLines[imprint.Memory](t, r); len(ms) != 1 || ms[0].Content != "the target's own memory" {
		t.Errorf("the refused target holds %v", ms)
	}
}

func asExit(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}

func get[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestMigratePendingWorkRunsOnPostgres: the source holds a queued River
// extraction job for one session and pending messages with no job for
// another. After the migration the job is in the database's jobs table,
// and imprint serve on PostgreSQL carries out both: the job (handed to
// River) and the pending session (found again by the planner).
func TestMigratePendingWorkRunsOnPostgres(t *testing.T) {
	url := pgtest.Schema(t)
	t.Parallel()
	dir := t.TempDir()
	local := map[string]string{"IMPRINT_DATA_DIR": dir}
	for s, place := range map[string]string{"s-job": "Lisbon", "s-idle": "Kyoto"} {
		msgs := `[{"id":"m1","role":"user","content":"I moved to ` + place + ` last spring and I love the tram rides in ` + place + `."},
			{"id":"m2","role":"assistant","content":"That sounds lovely."}]`
		if r := runBin(t, local, msgs, "record", "--session", s); r.code != 0 {
			t.Fatalf("record: exit %d: %s", r.code, r.stderr)
		}
	}
	scope := imprint.Scope{Tenant: "default", User: "default", Agent: "default"}
	func() {
		db, err := sqlite.Open(t.Context(), filepath.Join(dir, "imprint.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		eng, err := schedule.NewRiver(t.Context(), riversqlite.New(db.WriterDB()), db, schedule.RiverConfig{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SetJobEngine(eng); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.EnqueueJob(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s-job",
			UniqueKey: imprint.ExtractJobKey(scope, "s-job")}); err != nil {
			t.Fatal(err)
		}
	}()
	r := runBin(t, local, "", "migrate", "--to", url, "--json")
	var st curate.MigrateStats
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil || st.Jobs != 1 || st.Copied.Jobs != 1 {
		t.Fatalf("migrate: exit %d: %s %s; want one job copied", r.code, r.stdout, r.stderr)
	}
	func() {
		pg, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer pg.Close()
		jobs, err := pg.ListJobs(t.Context(), nil, imprint.JobAvailable, 10)
		if err != nil || len(jobs) != 1 || jobs[0].SessionID != "s-job" || jobs[0].Kind != imprint.JobExtract {
			t.Fatalf("the database's jobs after the migration: %+v, %v", jobs, err)
		}
	}()
	// First with a planner that waits an hour: only the copied job can
	// extract s-job. Then with one that finds the idle session at once.
	pg := map[string]string{"IMPRINT_DATA_DIR": t.TempDir(), "IMPRINT_STORE": url}
	for _, step := range []struct{ idle, session string }{{"1h", "s-job"}, {"1s", "s-idle"}} {
		p, err := startServe(imprintBin(t), t.TempDir(), map[string]string{"IMPRINT_STORE": url, "IMPRINT_EXTRACTION_IDLE": step.idle})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			r := runBin(t, pg, "", "memories", "--json", "--session", step.session)
			if ms := jsonLines[imprint.Memory](t, r); len(ms) > 0 {
				break
			}
			if time.Now().After(deadline) {
				p.kill()
				t.Fatalf("session %s was not extracted on postgres within 60 s: %s", step.session, p.stderr.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
		p.kill()
	}
}
