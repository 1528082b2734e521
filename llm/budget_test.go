package llm_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/sqlite"
)

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var (
	scopeA = imprint.Scope{Tenant: "t", User: "a", Agent: "x"}
	scopeB = imprint.Scope{Tenant: "t", User: "b", Agent: "x"}
)

func ask(t *testing.T, c *llm.Client, scope imprint.Scope) error {
	t.Helper()
	_, err := c.Complete(context.Background(), imprint.LLMRequest{Op: "test.op", Scope: scope,
		Messages: []imprint.ChatMessage{{Role: "user", Content: "hello there"}}})
	return err
}

// TestBudgetCallsPerHour: a scope's third call in the hour is refused with
// a BudgetError naming when the first leaves the window, nothing is sent,
// another scope is not charged, and the call passes once the hour is over.
func TestBudgetCallsPerHour(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script("test.op", llmtest.Text("ok"))
	clock := &testClock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	b := llm.NewBudget(llm.BudgetLimits{CallsPerHour: 2}, llm.BudgetOptions{Now: clock.now})
	c := llmtest.NewClient(t, srv, llmtest.FormatOpenAI, func(o *llm.Options) { o.Budget = b })

	first := clock.now()
	if err := ask(t, c, scopeA); err != nil {
		t.Fatal(err)
	}
	clock.advance(10 * time.Minute)
	if err := ask(t, c, scopeA); err != nil {
		t.Fatal(err)
	}
	err := ask(t, c, scopeA)
	var be *imprint.BudgetError
	if !errors.As(err, &be) || !errors.Is(err, imprint.ErrLLMBudget) {
		t.Fatalf("third call: %v, want a BudgetError", err)
	}
	if want := first.Add(time.Hour); !be.Until.Equal(want) || be.Limit != "calls_per_hour" {
		t.Errorf("refusal = %+v, want calls_per_hour until %v", be, want)
	}
	if got := imprint.ErrorCode(err); got != "llm_budget" {
		t.Errorf("ErrorCode = %q", got)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("provider got %d requests, want 2", n)
	}
	if err := ask(t, c, scopeB); err != nil {
		t.Errorf("another scope was refused: %v", err)
	}
	st, err := b.State(context.Background(), scopeA)
	if err != nil || !st.Exhausted || st.Calls != 2 || !st.FreesAt.Equal(first.Add(time.Hour)) {
		t.Errorf("state = %+v, %v", st, err)
	}
	clock.advance(50*time.Minute + time.Second)
	if err := ask(t, c, scopeA); err != nil {
		t.Errorf("after the hour: %v", err)
	}
}

// TestBudgetPromptTokensPerHour: once the scope's prompt tokens of the hour
// reach the limit, the next call waits until enough of them left the
// window.
func TestBudgetPromptTokensPerHour(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Handle("test.op", func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "ok", PromptTokens: 60}
	})
	clock := &testClock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	b := llm.NewBudget(llm.BudgetLimits{PromptTokensPerHour: 100}, llm.BudgetOptions{Now: clock.now})
	c := llmtest.NewClient(t, srv, llmtest.FormatOpenAI, func(o *llm.Options) { o.Budget = b })
	if err := ask(t, c, scopeA); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Minute)
	if err := ask(t, c, scopeA); err != nil { // 60 < 100: passes, reaching 120
		t.Fatal(err)
	}
	err := ask(t, c, scopeA)
	until, ok := imprint.BudgetWait(err)
	// Dropping the first call leaves 60 < 100.
	if want := clock.now().Add(-time.Minute).Add(time.Hour); !ok || !until.Equal(want) {
		t.Fatalf("third call: %v (until %v), want a refusal until %v", err, until, want)
	}
}

// TestBudgetTotalCalls: --max-llm-calls refuses every call after the N-th,
// whatever the scope, with no time it frees up.
func TestBudgetTotalCalls(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script("test.op", llmtest.Text("ok"))
	c := llmtest.NewClient(t, srv, llmtest.FormatOpenAI, func(o *llm.Options) {
		o.Budget = llm.NewBudget(llm.BudgetLimits{TotalCalls: 2}, llm.BudgetOptions{})
	})
	for _, s := range []imprint.Scope{scopeA, {}} {
		if err := ask(t, c, s); err != nil {
			t.Fatal(err)
		}
	}
	err := ask(t, c, scopeB)
	until, ok := imprint.BudgetWait(err)
	if !ok || !until.IsZero() {
		t.Fatalf("third call: %v, want a refusal with no time", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("provider got %d requests, want 2", n)
	}
}

// TestBudgetSurvivesRestart: a new Budget over the same call log (the
// sqlite store) counts the scope's calls of the last hour recorded by the
// process before.
func TestBudgetSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := llmtest.NewServer(t)
	srv.Script("test.op", llmtest.Text("ok"))
	clock := &testClock{t: time.Now()}
	limits := llm.BudgetLimits{CallsPerHour: 2}
	before := llmtest.NewClient(t, srv, llmtest.FormatOpenAI, func(o *llm.Options) {
		o.Budget = llm.NewBudget(limits, llm.BudgetOptions{Now: clock.now, Source: db})
		o.Recorder = db
	})
	for range 2 {
		if err := ask(t, before, scopeA); err != nil {
			t.Fatal(err)
		}
	}
	after := llmtest.NewClient(t, srv, llmtest.FormatOpenAI, func(o *llm.Options) {
		o.Budget = llm.NewBudget(limits, llm.BudgetOptions{Now: clock.now, Source: db})
		o.Recorder = db
	})
	if err := ask(t, after, scopeA); !errors.Is(err, imprint.ErrLLMBudget) {
		t.Fatalf("after a restart: %v, want the budget spent", err)
	}
	if err := ask(t, after, scopeB); err != nil {
		t.Errorf("another scope after a restart: %v", err)
	}
}
