package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
	"github.com/imprint-dev/imprint/llm"
)

// Node is one imprint node: its configuration and the adapters built from
// it, each opened on first use and closed by Close. It is safe for
// concurrent use.
type Node struct {
	// Config is the configuration in effect.
	Config *config.Config
	// Logger receives the adapters' and pipelines' logs.
	Logger *slog.Logger

	// recorder receives every LLM call attempt (see LLMCalls).
	recorder llm.LogRecorder

	mu      sync.Mutex
	store   imprint.Store
	closers []func() error
	llmDone bool
	llm     imprint.LLM
	llmErr  error
	// budget is the LLM client's budget (nil: none); maxLLMCalls is
	// LimitLLMCalls' and clock UseClock's.
	budget      *llm.Budget
	maxLLMCalls int
	clock       llm.Clock
	embDone     bool
	embedder    imprint.Embedder
	embErr      error
}

// New returns the node of cfg, logging to logger. Nothing is opened yet.
func New(cfg *config.Config, logger *slog.Logger) *Node {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Node{Config: cfg, Logger: logger}
}

// Store opens the configured store on first use and returns it; later
// calls return the same store, which Close closes. Errors: ErrInvalid for
// a store value that is not supported, ErrUnavailable when the database
// cannot be opened.
func (n *Node) Store(ctx context.Context) (imprint.Store, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.store != nil {
		return n.store, nil
	}
	st, err := openStore(ctx, n.Config)
	if err != nil {
		return nil, err
	}
	n.store = st
	n.recorder.SetLog(st)
	n.closers = append(n.closers, func() error {
		n.recorder.SetLog(nil)
		return st.Close()
	})
	return st, nil
}

// LLM returns the configured LLM client, or nil (and no error) when
// llm.provider is none. The client is built once; every call it makes is
// recorded in the store's call log (when the store is open) and in memory.
func (n *Node) LLM() (imprint.LLM, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.llmDone {
		n.llm, n.llmErr = n.buildLLM()
		n.llmDone = true
	}
	return n.llm, n.llmErr
}

// LLMCalls returns the in-memory record of every LLM call attempt made
// through LLM (for usage summaries); the same calls go to the store's call
// log when the store is open.
func (n *Node) LLMCalls() *llm.MemoryRecorder { return &n.recorder.Mem }

// Embedder returns the configured embedder (cached in memory), or nil (and
// no error) when embedding.provider is none.
func (n *Node) Embedder() (imprint.Embedder, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.embDone {
		n.embedder, n.embErr = n.buildEmbedder()
		n.embDone = true
	}
	return n.embedder, n.embErr
}

// UseClock takes the clock of ctx (llm.WithClock; tests move time) for
// the LLM budget. Call it before LLM.
func (n *Node) UseClock(ctx context.Context) {
	n.mu.Lock()
	n.clock = llm.ClockFrom(ctx)
	n.mu.Unlock()
}

// LimitLLMCalls makes the LLM client stop after max calls (0: no limit;
// import --max-llm-calls). Call it before LLM.
func (n *Node) LimitLLMCalls(max int) {
	n.mu.Lock()
	n.maxLLMCalls = max
	n.mu.Unlock()
}

// budgetRecheck is how long a job refused by the budget sleeps at most.
func (n *Node) budgetRecheck() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.clock.RecheckEvery()
}

// newBudget returns the LLM budget of the configuration and of
// LimitLLMCalls, or nil when no limit is set; n.mu is held.
func (n *Node) newBudget() *llm.Budget {
	c := n.Config.LLM.Budget
	lim := llm.BudgetLimits{CallsPerHour: c.CallsPerHour, PromptTokensPerHour: c.PromptTokensPerHour, TotalCalls: n.maxLLMCalls}
	if lim.Off() {
		return nil
	}
	return llm.NewBudget(lim, llm.BudgetOptions{Now: n.clock.Now, Source: &n.recorder})
}

// LLMBudget returns the budget the LLM client enforces, or nil (no limit,
// or no LLM). Call it after LLM.
func (n *Node) LLMBudget() *llm.Budget {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.budget
}

// Close releases what the node opened (the store last). The node may be
// used again afterwards: the store opens anew.
func (n *Node) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	for i := len(n.closers) - 1; i >= 0; i-- {
		if err := n.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	n.closers = nil
	n.store = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}
