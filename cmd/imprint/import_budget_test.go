package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/sqlite"
)

// budgetSum is the import summary with the fields of a budget stop.
type budgetSum struct {
	importSum
	LLMBudgetReached bool `json:"llm_budget_reached"`
	EpisodesLeft     int  `json:"episodes_left"`
	PendingMessages  int  `json:"pending_messages"`
}

// requestKeys lists the requests the fake got after the first skip, as
// op + prompt, sorted: the work they asked for.
func requestKeys(srv *llmtest.Server, skip int) []string {
	var out []string
	for _, r := range srv.Requests()[skip:] {
		out = append(out, r.Op+"\x00"+r.System+"\x00"+r.User)
	}
	sort.Strings(out)
	return out
}

// storedCounts counts what an import stored in dir: messages pending or
// not, traces and live memories of the default scope.
func storedCounts(t *testing.T, dir string) map[string]int {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sc := imprint.DefaultScope()
	out := map[string]int{}
	trs, err := db.ListTraces(ctx, sc, imprint.TraceFilter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	out["traces"] = len(trs)
	if out["memories"], err = db.CountMemories(ctx, sc); err != nil {
		t.Fatal(err)
	}
	sessions, err := db.ListSessions(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		n, err := db.CountPending(ctx, sc, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		out["pending"] += n
	}
	return out
}

// TestImportMaxLLMCallsStopsAndResumes: an import with --max-llm-calls 3
// makes at most 3 calls, exits 0 saying how far it got, and the same
// import run again finishes; together they stored what one uninterrupted
// import stores, with the same LLM requests, none repeated.
func TestImportMaxLLMCallsStopsAndResumes(t *testing.T) {
	t.Parallel()
	paths := []string{repoFile(t, "examples/conversation.json"), repoFile(t, "examples/claude-code/session.jsonl")}
	srv, _ := fakeLLM(t)
	env := map[string]string{
		"IMPRINT_LLM_PROVIDER":              "openai",
		"IMPRINT_LLM_BASE_URL":              srv.URL,
		"IMPRINT_LLM_MODEL":                 "x",
		"IMPRINT_LLM_MAX_RETRIES":           "0",
		"IMPRINT_CAPTURE_SYNTH_REFLECTIONS": "true",
		// One call per unit of work (a window, an episode), so the
		// limit is exact; the judge would be a call past it.
		"IMPRINT_EXTRACTION_ENABLE_DEDUP": "false",
	}
	whole := t.TempDir()
	importJSON(t, env, append([]string{"--data-dir", whole}, paths...)...)
	want := requestKeys(srv, 0)
	if len(want) < 5 {
		t.Fatalf("the whole import made %d calls; the test needs more than the limit", len(want))
	}

	dir := t.TempDir()
	before := len(srv.Requests())
	r := runImprint(t, env, append([]string{"import", "--json", "--max-llm-calls", "3", "--data-dir", dir}, paths...)...)
	if r.code != 0 {
		t.Fatalf("import --max-llm-calls 3: exit %d: %s", r.code, r.stderr)
	}
	first := jsonLines[budgetSum](t, r)[0]
	if len(srv.Requests())-before != first.LLMCalls {
		t.Errorf("summary says %d calls, the fake got %d", first.LLMCalls, len(srv.Requests())-before)
	}
	if made := len(srv.Requests()) - before; made > 3 || first.LLMCalls > 3 {
		t.Errorf("import --max-llm-calls 3 made %d calls (summary %d)", made, first.LLMCalls)
	}
	if !first.LLMBudgetReached || first.EpisodesLeft+first.PendingMessages == 0 {
		t.Errorf("first run summary: %+v, want the budget stop with work left", first)
	}
	second := importJSONAs[budgetSum](t, env, append([]string{"--data-dir", dir}, paths...)...)
	if second.LLMBudgetReached {
		t.Errorf("the second run stopped at a budget: %+v", second)
	}
	got := requestKeys(srv, before)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests of the two runs differ from the uninterrupted import's (-whole +split):\n%s", diff)
	}
	if w, g := storedCounts(t, whole), storedCounts(t, dir); !cmp.Equal(w, g) || g["pending"] != 0 {
		t.Errorf("stored: whole %v, split %v", w, g)
	}
	text := runImprint(t, env, append([]string{"import", "--max-llm-calls", "1", "--data-dir", t.TempDir()}, paths...)...)
	if text.code != 0 || !strings.Contains(text.stdout, "run the same import again to resume") {
		t.Errorf("text output of a budget stop: exit %d\n%s%s", text.code, text.stdout, text.stderr)
	}
}

// TestImportLockOneAtATime: while one import process holds the data dir's
// lock, a second with --no-wait exits 1 naming the lock and the holder,
// and one without it waits (saying so) and imports once the first is done.
func TestImportLockOneAtATime(t *testing.T) {
	t.Parallel()
	bin := buildImprint(t)
	dir := t.TempDir()
	path := repoFile(t, "examples/conversation.json")
	// The first import is held in its LLM call until release is closed.
	release := make(chan struct{})
	srv := llmtest.NewServer(t)
	srv.Handle("extract.l1.v1", func(llmtest.Request) llmtest.Reply {
		<-release
		return llmtest.JSON(map[string]any{"scenes": []any{}})
	})
	env := append(os.Environ(), "HOME="+t.TempDir(), "IMPRINT_LLM_PROVIDER=openai", "IMPRINT_LLM_BASE_URL="+srv.URL,
		"IMPRINT_LLM_MODEL=x", "IMPRINT_LLM_MAX_RETRIES=0", "IMPRINT_LLM_TIMEOUT=60s")
	start := func(args ...string) (*exec.Cmd, *lockedBuffer) {
		cmd := exec.Command(bin, append([]string{"import", "--no-capture", "--data-dir", dir}, args...)...)
		cmd.Env = env
		out := &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, out
	}
	holder, holderOut := start(path)
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	waitFor(t, "the first import calls the LLM", func() bool { return len(srv.Requests()) > 0 })

	lockPath := filepath.Join(dir, ingest.LockName)
	noWait := exec.Command(bin, "import", "--no-wait", "--data-dir", dir, path)
	noWait.Env = env
	out, err := noWait.CombinedOutput()
	if code := noWait.ProcessState.ExitCode(); code != 1 || err == nil {
		t.Errorf("import --no-wait while another holds the lock: exit %d, want 1\n%s", code, out)
	}
	if want := fmt.Sprintf("(pid %d) holds the import lock %s", holder.Process.Pid, lockPath); !strings.Contains(string(out), want) {
		t.Errorf("--no-wait message %q does not say %q", out, want)
	}

	waiter, waiterOut := start(path)
	waitFor(t, "the second import says it waits", func() bool {
		return strings.Contains(waiterOut.String(), "waiting for the import lock "+lockPath+" held by pid "+fmt.Sprint(holder.Process.Pid))
	})
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d LLM calls while the first import holds the lock, want its one", n)
	}
	close(release)
	if err := holder.Wait(); err != nil {
		t.Fatalf("first import: %v\n%s", err, holderOut.String())
	}
	done := make(chan error, 1)
	go func() { done <- waiter.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("second import: %v\n%s", err, waiterOut.String())
		}
	case <-time.After(60 * time.Second):
		_ = waiter.Process.Kill()
		t.Fatalf("second import did not finish after the first\n%s", waiterOut.String())
	}
	if !strings.Contains(waiterOut.String(), "0 recorded") {
		t.Errorf("the second import recorded messages again:\n%s", waiterOut.String())
	}
}
