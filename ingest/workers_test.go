package ingest

import (
	"errors"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/sqlite"
)

// A capture job stores the episode's traces scored by the model; the job
// of an episode that is gone, or that belongs to another scope, completes
// with nothing captured; a job the LLM budget refuses returns the refusal
// (the job waits) with nothing saved and no capture.failed.
func TestCaptureJob(t *testing.T) {
	t.Parallel()
	trs := tauTranscripts(t)
	db := openDB(t)
	srv := fakeLLM(t)
	events := &eventLog{}
	w := &Workers{Store: db, Capture: capture.NewRunner(capture.Deps{Store: db, LLM: client(t, srv, nil), Events: events}, scoringConfig())}

	ep, job := closeEpisode(t, db, ana, trs[0].SessionID, trs[0].Episodes[0].Turns, imprint.ClosedFinalized)
	if err := w.CaptureJob(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	traces, err := db.ListTraces(t.Context(), ana, imprint.TraceFilter{EpisodeID: ep.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) == 0 {
		t.Fatal("the capture job stored no trace")
	}
	for _, tr := range traces {
		if tr.Alpha <= 0 || !tr.Usable || tr.Reflection == nil || tr.Scope != ana {
			t.Errorf("trace %s: alpha %v usable %v reflection %v scope %v; want the model's scores in ana's scope", tr.ID, tr.Alpha, tr.Usable, tr.Reflection, tr.Scope)
		}
	}

	// The episode asked for in bob's scope is not found there.
	other := job
	other.Scope = bob
	if err := w.CaptureJob(t.Context(), other); err != nil {
		t.Errorf("job of an episode of another scope = %v, want it completed", err)
	}
	gone := job
	gone.EpisodeID = "no-such-episode"
	if err := w.CaptureJob(t.Context(), gone); err != nil {
		t.Errorf("job of a missing episode = %v, want it completed", err)
	}
	if n, err := db.ListTraces(t.Context(), bob, imprint.TraceFilter{}); err != nil || len(n) != 0 {
		t.Errorf("traces in bob's scope: %d, %v", len(n), err)
	}

	// With llm.budget.calls_per_hour 1, spent by a call of ana's, the next
	// episode waits.
	limited := client(t, srv, llm.NewBudget(llm.BudgetLimits{CallsPerHour: 1}, llm.BudgetOptions{}))
	if _, err := imprint.WithLLMScope(limited, ana).Complete(t.Context(), imprint.LLMRequest{Op: capture.OpAlpha, System: "Grade the step.",
		Messages: []imprint.ChatMessage{{Role: "user", Content: "The agent looked the reservation up."}}}); err != nil {
		t.Fatal(err)
	}
	w.Capture = capture.NewRunner(capture.Deps{Store: db, LLM: limited, Events: events}, scoringConfig())
	ep2, job2 := closeEpisode(t, db, ana, trs[1].SessionID, trs[1].Episodes[0].Turns, imprint.ClosedFinalized)
	before := len(srv.Requests())
	err = w.CaptureJob(t.Context(), job2)
	if !errors.Is(err, imprint.ErrLLMBudget) {
		t.Fatalf("capture job over the budget = %v, want ErrLLMBudget", err)
	}
	if got, _ := db.ListTraces(t.Context(), ana, imprint.TraceFilter{EpisodeID: ep2.ID}); len(got) != 0 {
		t.Errorf("%d traces saved of a refused capture", len(got))
	}
	if n := len(srv.Requests()); n != before {
		t.Errorf("the provider got %d requests over the budget", n-before)
	}
	for _, typ := range events.types() {
		if strings.HasPrefix(typ, capture.EventFailed) {
			t.Errorf("a capture was announced failed: %v", events.types())
		}
	}
}

// recordTranscript records the messages of a transcript as L0 messages of
// scope (no embedder: they are stored without a vector).
func recordTranscript(t *testing.T, rec *record.Recorder, scope imprint.Scope, sessionID string, msgs []imprint.Message) {
	t.Helper()
	if _, err := rec.Record(t.Context(), scope, sessionID, msgs); err != nil {
		t.Fatal(err)
	}
}

// extractWorkers records the messages of tr in ana's scope and returns
// the store, the event log and the job handlers extracting with srv's
// model under budget (nil: none) and cfg.
func extractWorkers(t *testing.T, tr importer.Transcript, srv *llmtest.Server, budget *llm.Budget, cfg extract.Config) (*sqlite.DB, *eventLog, *Workers) {
	t.Helper()
	db := openDB(t)
	events := &eventLog{}
	rec := record.NewRecorder(record.Deps{Store: db}, record.Config{})
	recordTranscript(t, rec, ana, tr.SessionID, tr.Messages)
	w := &Workers{Store: db, Events: events, Extract: extract.NewRunner(extract.Deps{Store: db, LLM: client(t, srv, budget), Records: recordsLog(t)}, cfg)}
	return db, events, w
}

// An extraction job extracts the session's pending messages window after
// window into memories of its scope, announcing each window's result as
// extraction.done with that scope; a provider that keeps failing fails the
// job, leaves the messages pending and announces extraction.failed; a job
// the LLM budget refuses returns the refusal, keeps the windows done, and
// announces no failure.
func TestExtractJob(t *testing.T) {
	t.Parallel()
	trs := tauTranscripts(t)
	t.Run("extracts", func(t *testing.T) {
		t.Parallel()
		srv := fakeLLM(t)
		db, events, w := extractWorkers(t, trs[0], srv, nil, extract.DefaultConfig())
		if err := w.ExtractJob(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: ana, SessionID: trs[0].SessionID}); err != nil {
			t.Fatal(err)
		}
		if n, err := db.CountPending(t.Context(), ana, trs[0].SessionID); err != nil || n != 0 {
			t.Errorf("%d messages still pending (%v)", n, err)
		}
		stored := 0
		for _, e := range events.evs {
			if e.Type != imprint.EventExtractionDone || e.Scope != ana {
				t.Errorf("event %s in %v, want extraction.done in ana's scope", e.Type, e.Scope)
				continue
			}
			stored += e.Payload.(extract.Result).Decisions.Store
		}
		mems, err := db.ListMemories(t.Context(), ana, imprint.MemoryFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(mems) == 0 || len(mems) != stored {
			t.Errorf("%d memories stored, the events say %d", len(mems), stored)
		}
		if len(events.evs) != opCounts(srv)[extract.OpExtract] {
			t.Errorf("%d window results announced for %d extraction calls", len(events.evs), opCounts(srv)[extract.OpExtract])
		}
		if got, _ := db.ListMemories(t.Context(), bob, imprint.MemoryFilter{Limit: 10}); len(got) != 0 {
			t.Errorf("%d memories in another scope", len(got))
		}
	})
	t.Run("provider failing", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t)
		srv.Script(extract.OpExtract, llmtest.Fault500())
		db, events, w := extractWorkers(t, trs[0], srv, nil, extract.DefaultConfig())
		before, _ := db.CountPending(t.Context(), ana, trs[0].SessionID)
		if err := w.ExtractJob(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: ana, SessionID: trs[0].SessionID}); err == nil {
			t.Fatal("an extraction job whose provider fails succeeded")
		}
		if n, _ := db.CountPending(t.Context(), ana, trs[0].SessionID); n != before || n == 0 {
			t.Errorf("%d messages pending after the failure, want the %d before", n, before)
		}
		if got := events.types(); len(got) != 1 || got[0] != imprint.EventExtractionFailed+" "+ana.String() {
			t.Errorf("events %v, want one extraction.failed in ana's scope", got)
		}
	})
	t.Run("budget", func(t *testing.T) {
		t.Parallel()
		srv := fakeLLM(t)
		cfg := extract.DefaultConfig()
		cfg.MaxMessagesPerExtraction = 4
		db, events, w := extractWorkers(t, trs[0], srv, llm.NewBudget(llm.BudgetLimits{CallsPerHour: 1}, llm.BudgetOptions{}), cfg)
		err := w.ExtractJob(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: ana, SessionID: trs[0].SessionID})
		if !errors.Is(err, imprint.ErrLLMBudget) {
			t.Fatalf("extraction job over the budget = %v, want ErrLLMBudget", err)
		}
		if n, _ := db.CountPending(t.Context(), ana, trs[0].SessionID); n == 0 {
			t.Error("no message left pending after the budget stopped extraction")
		}
		if len(srv.Requests()) != 1 {
			t.Errorf("the provider got %d requests under a budget of one call", len(srv.Requests()))
		}
		for _, typ := range events.types() {
			if strings.HasPrefix(typ, imprint.EventExtractionFailed) {
				t.Errorf("a window was announced failed: %v", events.types())
			}
		}
	})
}

// The embedding retry job gives the scope's messages, memories and traces
// stored without a vector their vectors, and leaves another scope's alone.
func TestEmbedJob(t *testing.T) {
	t.Parallel()
	trs := tauTranscripts(t)
	db := openDB(t)
	rec := record.NewRecorder(record.Deps{Store: db}, record.Config{})
	recordTranscript(t, rec, ana, trs[0].SessionID, trs[0].Messages)
	recordTranscript(t, rec, bob, trs[1].SessionID, trs[1].Messages)
	// Traces and memories without vectors: captured and extracted with no
	// embedder.
	_, job := closeEpisode(t, db, ana, trs[2].SessionID, trs[2].Episodes[0].Turns, imprint.ClosedFinalized)
	plain := &Workers{Store: db, Capture: capture.NewRunner(capture.Deps{Store: db}, capture.DefaultConfig()),
		Extract: extract.NewRunner(extract.Deps{Store: db, LLM: client(t, fakeLLM(t), nil), Records: recordsLog(t)}, extract.DefaultConfig())}
	if err := plain.CaptureJob(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	if err := plain.ExtractJob(t.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: ana, SessionID: trs[0].SessionID}); err != nil {
		t.Fatal(err)
	}
	unembedded := func(scope imprint.Scope) (msgs, mems, traces int) {
		t.Helper()
		a, err1 := db.UnembeddedMessages(t.Context(), scope, 1000)
		b, err2 := db.UnembeddedMemories(t.Context(), scope, 1000)
		c, err3 := db.UnembeddedTraces(t.Context(), scope, 1000)
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		return len(a), len(b), len(c)
	}
	msgs, mems, traces := unembedded(ana)
	if msgs == 0 || mems == 0 || traces == 0 {
		t.Fatalf("before the job: %d messages, %d memories, %d traces without a vector; the test needs some of each", msgs, mems, traces)
	}
	bobMsgs, _, _ := unembedded(bob)

	w := &Workers{Store: db, Embedder: embedding.NewHash(), EmbedTraces: true}
	if err := w.EmbedJob(t.Context(), imprint.Job{Kind: imprint.JobEmbed, Scope: ana}); err != nil {
		t.Fatal(err)
	}
	if msgs, mems, traces := unembedded(ana); msgs+mems+traces != 0 {
		t.Errorf("after the job: %d messages, %d memories, %d traces still without a vector", msgs, mems, traces)
	}
	if n, _, _ := unembedded(bob); n != bobMsgs {
		t.Errorf("bob's messages without a vector: %d, want the %d before", n, bobMsgs)
	}
}
