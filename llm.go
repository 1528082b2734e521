package imprint

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ChatMessage is one message of an LLM conversation.
type ChatMessage struct {
	Role    string `json:"role"` // "user" or "assistant"
	Content string `json:"content"`
}

// LLMRequest is one LLM operation. Op names it (e.g. "capture.alpha.v1"); it
// is sent as the X-Imprint-Op header and recorded in the call log.
type LLMRequest struct {
	Op string
	// Scope is whose work the request does; the client charges it to that
	// scope's budget (llm.budget) and records it in the call log. Zero
	// means no scope: the request is charged to no budget.
	Scope    Scope
	System   string
	Messages []ChatMessage
	// JSON asks the provider for a JSON object reply where it supports it.
	JSON        bool
	MaxTokens   int
	Temperature float64
	// Timeout bounds each HTTP attempt; zero means the client's default.
	Timeout time.Duration
}

// LLMResponse is a provider's reply.
type LLMResponse struct {
	Text             string
	Model            string
	PromptTokens     int
	CompletionTokens int
}

// LLM is a chat model reached through a provider. Complete returns errors of
// kinds ErrLLMUnavailable, ErrLLMTimeout, ErrLLMAuth or ErrLLMOutputMalformed.
type LLM interface {
	Complete(ctx context.Context, req LLMRequest) (LLMResponse, error)
	// Provider names the provider ("openai", "anthropic").
	Provider() string
	// Model names the model requests go to.
	Model() string
}

// LLMCall is one recorded HTTP attempt to an LLM provider.
type LLMCall struct {
	Op string `json:"op"`
	// Scope is the request's scope; zero when the request named none.
	Scope            Scope  `json:"scope"`
	Provider         string `json:"provider"`
	Model            string `json:"model"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	// TokensEstimated is true when the provider gave no usage and the
	// counts come from the estimator.
	TokensEstimated bool          `json:"tokens_estimated"`
	Latency         time.Duration `json:"latency_ms"`
	// Outcome is "ok" or an error code (llm_timeout, llm_unavailable, ...).
	Outcome string `json:"outcome"`
	Attempt int    `json:"attempt"`
	At      Time   `json:"at"`
}

// LLMUsage sums the recorded calls of one op.
type LLMUsage struct {
	Calls            int   `json:"calls"`
	PromptTokens     int   `json:"prompt_tokens"`
	CompletionTokens int   `json:"completion_tokens"`
	Errors           int   `json:"errors"`
	LatencyMS        int64 `json:"latency_ms"`
}

// ErrLLMBudget means the scope's LLM budget (llm.budget, or an import's
// --max-llm-calls) is spent for now. The work is not failed: it waits for
// the budget to free up (see BudgetError).
var ErrLLMBudget = errors.New("llm_budget")

// BudgetError is the error of a request refused by an LLM budget. It is of
// kind ErrLLMBudget. Job engines reschedule the job for Until without
// counting an attempt.
type BudgetError struct {
	Scope Scope
	// Limit names the limit that was reached, e.g. "calls_per_hour".
	Limit string
	// Until is when the budget frees up; zero when it never does (a limit
	// on the calls of one command).
	Until time.Time
}

func (e *BudgetError) Error() string {
	if e.Until.IsZero() {
		return fmt.Sprintf("llm budget of %s spent (%s)", e.Scope, e.Limit)
	}
	return fmt.Sprintf("llm budget of %s spent (%s); it frees up at %s", e.Scope, e.Limit, At(e.Until))
}

// Is reports whether target is ErrLLMBudget.
func (e *BudgetError) Is(target error) bool { return target == ErrLLMBudget }

// BudgetState is a scope's LLM budget (llm.budget) as /v1/status reports
// it.
type BudgetState struct {
	// CallsPerHour and PromptTokensPerHour are the limits (0: off).
	CallsPerHour        int `json:"calls_per_hour"`
	PromptTokensPerHour int `json:"prompt_tokens_per_hour"`
	// Calls and PromptTokens are what the scope spent in the last hour.
	Calls        int `json:"calls"`
	PromptTokens int `json:"prompt_tokens"`
	// Exhausted is true while a limit is reached: LLM work of the scope
	// waits until FreesAt.
	Exhausted bool `json:"exhausted"`
	FreesAt   Time `json:"frees_at"`
	// ResetsAt is when the oldest call of the window leaves it; zero when
	// the window is empty.
	ResetsAt Time `json:"resets_at"`
}

// BudgetWait returns when the work refused with err may try again: the
// Until of a BudgetError in err's chain, and whether there is one.
func BudgetWait(err error) (time.Time, bool) {
	var be *BudgetError
	if !errors.As(err, &be) {
		return time.Time{}, false
	}
	return be.Until, true
}

// CallRecorder receives every LLM call attempt. Implementations must be safe
// for concurrent use and must not block for long.
type CallRecorder interface {
	RecordLLMCall(ctx context.Context, c LLMCall) error
}

// Embedder turns texts into vectors. Implementations are deterministic for
// the same name. Embed returns one vector per text, in order, each
// L2-normalized, or an error of kind ErrUnavailable.
type Embedder interface {
	// Name identifies the embedder and its dimension, e.g. "hash/384"; it is
	// recorded on every stored vector. Changing it requires re-embedding.
	Name() string
	Dimensions() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// LexicalEmbedder is implemented by an Embedder whose vectors encode the
// words and character n-grams a text is made of rather than its meaning
// (the local hash embedder). Its ranking mostly repeats keyword search's,
// so search weighs it below keywords instead of counting it as a second,
// independent opinion.
type LexicalEmbedder interface {
	Embedder
	// Lexical reports whether the vectors are lexical.
	Lexical() bool
}

// IsLexical reports whether e is a LexicalEmbedder whose vectors are
// lexical; an embedder that does not say is taken as semantic.
func IsLexical(e Embedder) bool {
	l, ok := e.(LexicalEmbedder)
	return ok && l.Lexical()
}

// EstimateTokens estimates the number of tokens in s: one per Han, Kana or
// Hangul rune, plus one per four bytes of other text, rounded up. It is the
// estimator used when a provider reports no usage, and by recall budgets.
func EstimateTokens(s string) int {
	cjk, other := 0, 0
	for _, r := range s {
		switch {
		case r >= 0x3040 && r <= 0x30ff, r >= 0x3400 && r <= 0x9fff, r >= 0xac00 && r <= 0xd7af, r >= 0xf900 && r <= 0xfaff:
			cjk++
		default:
			if r < 0x80 {
				other++
			} else {
				other += 2
			}
		}
	}
	return cjk + (other+3)/4
}
