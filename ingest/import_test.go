package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/sqlite"
)

// tauSources splits the τ-bench airline trajectories of testdata/ into
// files of per trajectories each (so the import reads several sources,
// some ahead of the one it imports) and returns them as sources.
func tauSources(t *testing.T, per int) []Source {
	t.Helper()
	data, err := os.ReadFile(testfiles.Path(t, "tau-bench/airline-40.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all []json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	for i := 0; i < len(all); i += per {
		b, err := json.Marshal(all[i:min(i+per, len(all))])
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("airline-%02d.json", i/per))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	srcs, _, err := CollectSources(paths, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	return srcs
}

// newImporter returns an importer into db in ana's scope capturing and
// extracting with m (nil: no LLM).
func newImporter(t *testing.T, db *sqlite.DB, m imprint.LLM) *Importer {
	t.Helper()
	ccfg := scoringConfig()
	xcfg := extract.DefaultConfig()
	return &Importer{
		Store: db, Scope: ana,
		Recorder:   record.NewRecorder(record.Deps{Store: db}, record.Config{}),
		Capture:    capture.NewRunner(capture.Deps{Store: db, LLM: m}, ccfg),
		Extract:    extract.NewRunner(extract.Deps{Store: db, LLM: m, Records: recordsLog(t)}, xcfg),
		WindowSize: xcfg.MaxMessagesPerExtraction, Background: xcfg.MaxBackgroundMessages,
	}
}

// counts is what a user sees of an import in the store.
type counts struct{ Messages, Traces, Memories, Pending int }

func storeCounts(t *testing.T, db *sqlite.DB, sessions []string) counts {
	t.Helper()
	var c counts
	ctx := context.Background()
	trs, err := db.ListTraces(ctx, ana, imprint.TraceFilter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	mems, err := db.ListMemories(ctx, ana, imprint.MemoryFilter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	c.Traces, c.Memories = len(trs), len(mems)
	for _, sid := range sessions {
		n, err := db.CountPending(ctx, ana, sid)
		if err != nil {
			t.Fatal(err)
		}
		c.Pending += n
		ms, err := db.MessagesBefore(ctx, ana, sid, math.MaxInt64, 100000)
		if err != nil {
			t.Fatal(err)
		}
		c.Messages += len(ms)
	}
	return c
}

// sessionsOf returns the session ids of the sources' transcripts.
func sessionsOf(t *testing.T, srcs []Source) []string {
	t.Helper()
	var out []string
	for _, s := range srcs {
		trs, _, err := s.Read(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trs {
			out = append(out, tr.SessionID)
		}
	}
	return out
}

// An import that reaches its LLM budget (imprint import --max-llm-calls)
// stops cleanly: it says so, with the episodes it did not capture and the
// messages left pending; what it captured and extracted stays. The same
// import run again without the limit finishes the work, to the state of
// one import that never stopped.
func TestImportStopsAtTheBudgetAndResumes(t *testing.T) {
	t.Parallel()
	srcs := tauSources(t, 5)
	sessions := sessionsOf(t, srcs)

	whole := openDB(t)
	full, err := newImporter(t, whole, client(t, fakeLLM(t), nil)).Run(t.Context(), srcs)
	if err != nil {
		t.Fatal(err)
	}
	want := storeCounts(t, whole, sessions)
	if full.LLMBudgetReached || want.Pending != 0 || want.Traces == 0 || want.Memories == 0 {
		t.Fatalf("an import without a budget: %+v, store %+v", full, want)
	}

	db := openDB(t)
	srv := fakeLLM(t)
	budget := llm.NewBudget(llm.BudgetLimits{TotalCalls: 12}, llm.BudgetOptions{})
	sum, err := newImporter(t, db, client(t, srv, budget)).Run(t.Context(), srcs)
	if err != nil {
		t.Fatal(err)
	}
	got := storeCounts(t, db, sessions)
	if !sum.LLMBudgetReached || sum.EpisodesLeft == 0 || sum.PendingMessages != got.Pending || got.Pending == 0 {
		t.Errorf("stopped import: budget reached %v, %d episodes left, %d messages pending (store: %d)",
			sum.LLMBudgetReached, sum.EpisodesLeft, sum.PendingMessages, got.Pending)
	}
	if got.Messages != want.Messages || got.Traces == 0 || got.Traces >= want.Traces {
		t.Errorf("stopped import stored %+v; want every message and some, not all, traces of %+v", got, want)
	}
	if sum.Traces != got.Traces {
		t.Errorf("the summary counts %d traces, the store holds %d", sum.Traces, got.Traces)
	}

	again, err := newImporter(t, db, client(t, srv, nil)).Run(t.Context(), srcs)
	if err != nil {
		t.Fatal(err)
	}
	if again.LLMBudgetReached || again.MessagesRecorded != 0 || again.EpisodesSkipped == 0 {
		t.Errorf("resumed import: %+v; want no message recorded twice and the captured episodes skipped", again)
	}
	if after := storeCounts(t, db, sessions); after != want {
		t.Errorf("after resuming: %+v, want %+v as one import makes", after, want)
	}
}

// ownGoroutines returns the stacks of the goroutines running the import's
// code (ingest, capture, extract, record) other than the caller's.
func ownGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 || strings.Contains(g, "testing.tRunner") {
			continue // this goroutine, or a test's
		}
		for _, pkg := range []string{"/imprint/ingest.", "/imprint/capture.", "/imprint/extract.", "/imprint/record."} {
			if strings.Contains(g, "imprint-dev"+pkg) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// leftGoroutines returns the import goroutines still running, letting
// those that are ending (past the signal their owner waits for) end
// first: a few yields, not enough for one still working to finish.
func leftGoroutines() []string {
	var left []string
	for range 20 {
		if left = ownGoroutines(); len(left) == 0 {
			return nil
		}
		runtime.Gosched()
	}
	return left
}

// An import cancelled half-way (Ctrl-C) returns the cancellation, keeps
// what it recorded and captured, and leaves no goroutine behind: the
// read-ahead readers and the capture and extraction stages have all
// stopped when Run returns. Not parallel: it counts the goroutines of the
// package's code.
func TestImportCancelledLeavesNoGoroutine(t *testing.T) {
	if left := leftGoroutines(); len(left) != 0 {
		t.Fatalf("import goroutines before the test:\n%s", strings.Join(left, "\n\n"))
	}
	srcs := tauSources(t, 2)
	sessions := sessionsOf(t, srcs)
	db := openDB(t)
	srv := fakeLLM(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The provider's 20th request cancels the import, mid-capture.
	var mu sync.Mutex
	calls, during := 0, 0
	score := echoScores(t)
	srv.Handle(capture.OpBatch, func(r llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 20 {
			during = len(ownGoroutines())
			cancel()
		}
		return score(r)
	})
	_, err := newImporter(t, db, client(t, srv, nil)).Run(ctx, srcs)
	left := leftGoroutines()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled import = %v, want context.Canceled", err)
	}
	mu.Lock()
	seen := during
	mu.Unlock()
	if seen == 0 {
		t.Fatal("no import goroutine seen while the import ran; the check cannot see them")
	}
	if len(left) != 0 {
		t.Errorf("%d import goroutines still running after Run returned:\n%s", len(left), strings.Join(left, "\n\n"))
	}
	got := storeCounts(t, db, sessions)
	if got.Messages == 0 || got.Traces == 0 {
		t.Errorf("the cancelled import kept %+v; want what it recorded and captured", got)
	}
	// Run again, it finishes the import.
	if _, err := newImporter(t, db, client(t, fakeLLM(t), nil)).Run(t.Context(), srcs); err != nil {
		t.Fatal(err)
	}
	if after := storeCounts(t, db, sessions); after.Pending != 0 || after.Traces <= got.Traces {
		t.Errorf("after importing again: %+v (cancelled: %+v)", after, got)
	}
}

// The dry run's estimate is what the import then does: as many capture
// calls as capture makes, and two calls per extraction window (the
// extraction and at most one conflict-judge call), with at least the
// prompt tokens the extraction calls send.
func TestDryRunEstimatesTheImport(t *testing.T) {
	t.Parallel()
	srcs := tauSources(t, 10)
	db := openDB(t)

	dry := func(capture, extract bool) *Summary {
		t.Helper()
		im := newImporter(t, db, nil)
		im.DryRun, im.Recorder, im.NoExtract = true, nil, !extract
		if !capture {
			im.Capture = nil
		}
		sum, err := im.Run(t.Context(), srcs)
		if err != nil {
			t.Fatal(err)
		}
		if sum.EstimatedLLMCalls == nil || sum.EstimatedPromptTokens == nil {
			t.Fatalf("dry run without an estimate: %+v", sum)
		}
		return sum
	}
	capOnly, extOnly := dry(true, false), dry(false, true)
	if c := storeCounts(t, db, sessionsOf(t, srcs)); c != (counts{}) {
		t.Fatalf("the dry runs wrote %+v", c)
	}

	srv := fakeLLM(t)
	sum, err := newImporter(t, db, client(t, srv, nil)).Run(t.Context(), srcs)
	if err != nil {
		t.Fatal(err)
	}
	ops := opCounts(srv)
	captureCalls := ops[capture.OpBatch] + ops[capture.OpSynth] + ops[capture.OpAlpha]
	if *capOnly.EstimatedLLMCalls != captureCalls || captureCalls == 0 {
		t.Errorf("estimated %d capture calls, the import made %d (%v)", *capOnly.EstimatedLLMCalls, captureCalls, ops)
	}
	if *extOnly.EstimatedLLMCalls != 2*ops[extract.OpExtract] || ops[extract.OpDedup] > ops[extract.OpExtract] || ops[extract.OpExtract] == 0 {
		t.Errorf("estimated %d extraction calls; the import made %d extractions and %d judge calls", *extOnly.EstimatedLLMCalls, ops[extract.OpExtract], ops[extract.OpDedup])
	}
	sent := 0
	for _, r := range srv.RequestsFor(extract.OpExtract) {
		sent += imprint.EstimateTokens(r.System) + imprint.EstimateTokens(r.User)
	}
	if *extOnly.EstimatedPromptTokens < sent {
		t.Errorf("estimated %d extraction prompt tokens, the extraction prompts alone had %d", *extOnly.EstimatedPromptTokens, sent)
	}
	if capOnly.Episodes != sum.Episodes || capOnly.MessagesRecorded != sum.MessagesRecorded {
		t.Errorf("dry run counted %d episodes and %d messages, the import %d and %d", capOnly.Episodes, capOnly.MessagesRecorded, sum.Episodes, sum.MessagesRecorded)
	}
}
