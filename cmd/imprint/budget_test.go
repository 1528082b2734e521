package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// movableClock is a clock a test moves forward.
type movableClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *movableClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *movableClock) advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// budgetStatus reads /v1/status as httpapi.Status.
func budgetStatus(t *testing.T, base string) httpapi.Status {
	t.Helper()
	resp, err := http.Get(base + "/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st httpapi.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// tracesOf counts the traces of an episode of the default scope.
func tracesOf(t *testing.T, base, episodeID string) int {
	t.Helper()
	resp, err := http.Get(base + "/v1/episodes/" + episodeID + "/traces")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0
	}
	var out struct {
		Traces []json.RawMessage `json:"traces"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return len(out.Traces)
}

// waitFor polls cond until it holds, failing the test after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 20s: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeBudgetMakesCaptureWait: with llm.budget.calls_per_hour 2 and
// three episodes of one call each, two are captured, the third waits
// (status says the budget is spent, its job is pending and not failed, no
// third call reached the provider), and once the hour has passed on the
// budget's clock it is captured.
func TestServeBudgetMakesCaptureWait(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewServer(t)
	fake.Handle("capture.batch.v1", batchReply)
	fake.Handle("capture.alpha.v1", func(llmtest.Request) llmtest.Reply {
		return llmtest.JSON(map[string]any{"alpha": 0.75, "usable": true, "reason": "clear"})
	})
	env := serveEnv(fake.URL)
	env["IMPRINT_LLM_BUDGET_CALLS_PER_HOUR"] = "2"
	// Each one-step episode is one batched scoring call that may write its reflection.
	env["IMPRINT_CAPTURE_SYNTH_REFLECTIONS"] = "true"
	clock := &movableClock{}
	ctx := llm.WithClock(context.Background(), llm.Clock{Now: clock.now, Recheck: time.Second})
	s := startInProcCtx(t, ctx, t.TempDir(), env)

	ids := []string{"ep-budget-1", "ep-budget-2", "ep-budget-3"}
	for i, id := range ids {
		body := fmt.Sprintf(`{"id":%q,"session_id":"budget","turns":[{"role":"user","content":"Restart the queue worker number %d"},`+
			`{"role":"assistant","content":"Worker %d restarted; the backlog drains."}]}`, id, i, i)
		resp, err := http.Post(s.URL+"/v1/episodes", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("post %s: %d", id, resp.StatusCode)
		}
	}
	captured := func() int {
		n := 0
		for _, id := range ids {
			if tracesOf(t, s.URL, id) > 0 {
				n++
			}
		}
		return n
	}
	var st httpapi.Status
	defer func() {
		if t.Failed() {
			debugDump(t, s, fake, ids)
		}
	}()
	// The status is read after the traces: a status read first may predate
	// the captures it is checked against. River marks a finished job
	// completed shortly after its handler returns, so the jobs are waited
	// for too.
	waitFor(t, "two episodes captured and the third waiting", func() bool {
		if captured() != 2 {
			return false
		}
		st = budgetStatus(t, s.URL)
		return st.Budget != nil && st.Budget.Exhausted && st.Budget.WaitingJobs == 1 && st.Jobs.Available == 1 && st.Jobs.Running == 0
	})
	if got := len(fake.Requests()); got != 2 {
		t.Errorf("provider got %d requests under a budget of 2 calls", got)
	}
	if st.Budget.Calls != 2 || st.Budget.CallsPerHour != 2 || st.Budget.FreesAt.IsZero() {
		t.Errorf("budget status = %+v, want 2 of 2 calls used and a time it frees up", *st.Budget)
	}
	if st.Jobs.Failed != 0 || st.Jobs.Available != 1 || len(st.FailedJobs) != 0 {
		t.Errorf("jobs = %+v, failed %+v: want the waiting capture pending, nothing failed", st.Jobs, st.FailedJobs)
	}

	clock.advance(llm.BudgetWindow + time.Minute)
	waitFor(t, "the third episode captured after the hour", func() bool { return captured() == 3 })
	st = budgetStatus(t, s.URL)
	if st.Jobs.Failed != 0 || st.Budget.WaitingJobs != 0 {
		t.Errorf("after the hour: jobs %+v, budget %+v", st.Jobs, *st.Budget)
	}
	if got := len(fake.Requests()); got != 3 {
		t.Errorf("provider got %d requests for three one-call episodes", got)
	}
}

// debugDump logs the status, the traces of ids, the requests the fake got
// and the server's log, for a failed test.
func debugDump(t *testing.T, s *inProcServe, fake *llmtest.Server, ids []string) {
	st := budgetStatus(t, s.URL)
	b, _ := json.Marshal(st)
	t.Logf("status %s", b)
	for _, id := range ids {
		t.Logf("%s traces %d", id, tracesOf(t, s.URL, id))
	}
	for _, r := range fake.Requests() {
		t.Logf("req %s", r.Op)
	}
	t.Logf("stderr %s", s.stderr.String())
}

// TestServeBudgetMakesExtractionWait: with llm.budget.calls_per_hour 1 and
// two sessions of one window each, one session is extracted and the other
// waits with its messages pending and no failed job; after the hour it is
// extracted.
func TestServeBudgetMakesExtractionWait(t *testing.T) {
	t.Parallel()
	fake, _ := fakeLLM(t)
	env := serveEnv(fake.URL)
	env["IMPRINT_LLM_BUDGET_CALLS_PER_HOUR"] = "1"
	env["IMPRINT_EXTRACTION_ENABLE_DEDUP"] = "false" // one call per window
	clock := &movableClock{}
	ctx := llm.WithClock(context.Background(), llm.Clock{Now: clock.now, Recheck: time.Second})
	s := startInProcCtx(t, ctx, t.TempDir(), env)
	for _, sid := range []string{"wait-a", "wait-b"} {
		body := fmt.Sprintf(`{"session_id":%q,"messages":[{"id":"%s-1","role":"user","content":"I keep the staging database on port 5433."},`+
			`{"id":"%s-2","role":"assistant","content":"Noted, port 5433 for staging."}]}`, sid, sid, sid)
		resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("post %s: %d", sid, resp.StatusCode)
		}
	}
	var st httpapi.Status
	waitFor(t, "one session extracted, the other waiting", func() bool {
		st = budgetStatus(t, s.URL)
		return st.PendingMessages == 2 && st.Budget != nil && st.Budget.Exhausted && st.Budget.WaitingJobs == 1
	})
	if n := len(fake.RequestsFor("extract.l1.v1")); n != 1 {
		t.Errorf("%d extraction calls under a budget of 1", n)
	}
	if st.Jobs.Failed != 0 || len(st.FailedJobs) != 0 {
		t.Errorf("failed jobs while waiting: %+v %+v", st.Jobs, st.FailedJobs)
	}
	clock.advance(llm.BudgetWindow + time.Minute)
	waitFor(t, "the waiting session extracted after the hour", func() bool {
		st = budgetStatus(t, s.URL)
		return st.PendingMessages == 0
	})
	if st.Jobs.Failed != 0 {
		t.Errorf("failed jobs: %+v", st.FailedJobs)
	}
}
