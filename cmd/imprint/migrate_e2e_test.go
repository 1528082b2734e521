package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
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

// searches are the queries of the search comparison: words of LoCoMo's
// messages and memories and of τ-bench's traces, a speaker's name, tool
// names, words Porter's stemmer and Snowball's English stem apart, CJK
// runs of three or more characters (the trigram index) and of two (a
// bigram of the word index), and text mixing both.
var searches = []string{"support group", "refund for my flight", "painting", "cancel reservation", "Caroline adoption",
	"What did Melanie paint", "baggage allowance gold member", "update_reservation_flights", "cancel_reservation",
	"charity race", "excited friends", "hopeful about the flights", "天気", "東京の天気", "蜂蜜を買った", "北京 烤鸭", "imprint 東京 tram"}

// searchRuns are the search commands compared before and after a
// migration, each run with every query of searches.
var searchRuns = [][]string{
	{"search"},
	{"search", "--json"},
	{"search", "--json", "--limit", "25", "--kind", "trace"},
	{"search", "--json", "--limit", "25", "--kind", "message"},
	{"search", "--json", "--limit", "25", "--kind", "memory"},
}

// cjkRecords adds, with the built binary, records holding CJK text to the
// data dir's store: messages of a session, a captured episode (traces) and
// memories, so the searches of CJK runs find every kind.
func cjkRecords(t *testing.T, env map[string]string) {
	t.Helper()
	msgs := `[{"id":"c1","role":"user","content":"東京の天気はどうですか。明日は東京で天気が良いといいな。"},
		{"id":"c2","role":"assistant","content":"東京の天気は晴れです。北京は雨です。"},
		{"id":"c3","role":"user","content":"昨日は蜂蜜を買った。蜂蜜を買ったのは初めて。"},
		{"id":"c4","role":"assistant","content":"北京 烤鸭 is famous; the imprint tram in 東京 too."},
		{"id":"c5","role":"user","content":"天気 天気 天気"}]`
	if r := runBin(t, env, msgs, "record", "--session", "cjk"); r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	ep := `{"session_id":"cjk-trip","turns":[
 {"role":"user","content":"東京の天気を調べて、蜂蜜を買った店も探して","ts":"2026-05-01T10:00:00Z"},
 {"role":"assistant","content":"東京の天気は晴れ。北京 烤鸭の店もあります。","ts":"2026-05-01T10:00:03Z"},
 {"role":"user","content":"天気は明日も晴れ？","ts":"2026-05-01T10:01:00Z"},
 {"role":"assistant","content":"明日の東京の天気も晴れです。","ts":"2026-05-01T10:01:03Z"}]}`
	if r := runBin(t, env, ep, "capture"); r.code != 0 {
		t.Fatalf("capture: exit %d: %s", r.code, r.stderr)
	}
	for _, m := range []string{"東京の天気が好き", "蜂蜜を買った店は駅の近く", "北京 烤鸭 is the user's favourite dish", "天気の話が多い"} {
		if r := runBin(t, env, "", "remember", m); r.code != 0 {
			t.Fatalf("remember: exit %d: %s", r.code, r.stderr)
		}
	}
}

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

// searchOutputs runs every search of searchRuns with every query and
// returns what each printed, by its arguments.
func searchOutputs(t *testing.T, env map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, run := range searchRuns {
		for _, q := range searches {
			args := append(slices.Clone(run), q)
			r := runBin(t, env, "", args...)
			if r.code != 0 {
				t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
			}
			out[strings.Join(args, " ")] = r.stdout
		}
	}
	return out
}

// keywordAgreement logs, for each query of searches and each kind, how
// many of the first depth keyword hits of the two stores are the same
// record at the same place and how many of those scores differ, and
// returns the number of places that differ in either.
func keywordAgreement(t *testing.T, a, b imprint.Store, depth int) int {
	t.Helper()
	scope := imprint.Scope{Tenant: "default", User: "default", Agent: "default"}
	differ := 0
	for _, q := range searches {
		var line []string
		for _, k := range []imprint.Kind{imprint.KindMemory, imprint.KindTrace, imprint.KindMessage} {
			tq := imprint.TextQuery{Scope: scope, Kind: k, Text: q, Limit: depth}
			ha, err := a.SearchText(t.Context(), tq)
			if err != nil {
				t.Fatal(err)
			}
			hb, err := b.SearchText(t.Context(), tq)
			if err != nil {
				t.Fatal(err)
			}
			same := samePlaces(ha, hb)[k]
			differ += max(len(ha), len(hb)) - same
			// PostgreSQL computes FTS5's bm25 from the same inputs in the
			// same order (postgres/bm25.go): the scores are the same
			// doubles.
			scores := 0
			for i := range min(len(ha), len(hb)) {
				if ha[i].Score != hb[i].Score {
					scores++
				}
			}
			differ += scores
			line = append(line, fmt.Sprintf("%s %d/%d (%d scores differ)", k, same, max(len(ha), len(hb)), scores))
		}
		t.Logf("keyword search %q, same place of %d: %s", q, depth, strings.Join(line, ", "))
	}
	return differ
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
	cjkRecords(t, local)
	before := outputs(t, local)
	beforeSearch := searchOutputs(t, local)

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
	// Search prints the same, byte for byte: the same hits in the same
	// order (and so the same fused scores) of every kind.
	if d := keywordAgreement(t, src.(imprint.Store), cp.(imprint.Store), 30); d != 0 {
		t.Errorf("%d keyword hits of the stores are not the same record with the same score at the same place", d)
	}
	afterSearch := searchOutputs(t, pg)
	for _, k := range slices.Sorted(maps.Keys(beforeSearch)) {
		if d := cmp.Diff(beforeSearch[k], afterSearch[k]); d != "" {
			t.Errorf("%s prints differently after the migration (-sqlite +postgres):\n%s", k, d)
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
