package imprint

import (
	"errors"
	"fmt"
)

// Error kinds. Check them with errors.Is; every layer wraps them with context.
var (
	// ErrNotFound means the record does not exist in the caller's scope.
	ErrNotFound = errors.New("not found")
	// ErrInvalid means the input is malformed or violates a rule; the message names the field.
	ErrInvalid = errors.New("invalid")
	// ErrConflict means the record exists and belongs to another scope or state.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable means a dependency (database, provider) could not be reached.
	ErrUnavailable = errors.New("unavailable")
	// ErrUnauthorized means the caller did not present valid credentials.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden means the caller's credentials do not allow the request:
	// another scope than its key's, or a write with a read-only key.
	ErrForbidden = errors.New("forbidden")
	// ErrTooLarge means the input exceeds a size limit.
	ErrTooLarge = errors.New("too large")

	// ErrLLMUnavailable means the LLM provider could not be reached or kept failing.
	ErrLLMUnavailable = errors.New("llm_unavailable")
	// ErrLLMTimeout means an LLM call ran past its deadline.
	ErrLLMTimeout = errors.New("llm_timeout")
	// ErrLLMOutputMalformed means the LLM reply could not be parsed or validated, even after a repair retry.
	ErrLLMOutputMalformed = errors.New("llm_output_malformed")
	// ErrLLMAuth means the provider rejected the credentials (401/403).
	ErrLLMAuth = errors.New("llm_auth")
)

// Invalidf returns an error of kind ErrInvalid whose message is safe to show
// to users; it should name the offending field or key.
func Invalidf(format string, args ...any) error {
	return &kindError{kind: ErrInvalid, msg: fmt.Sprintf(format, args...)}
}

// NotFoundf returns an error of kind ErrNotFound.
func NotFoundf(format string, args ...any) error {
	return &kindError{kind: ErrNotFound, msg: fmt.Sprintf(format, args...)}
}

// Forbiddenf returns an error of kind ErrForbidden.
func Forbiddenf(format string, args ...any) error {
	return &kindError{kind: ErrForbidden, msg: fmt.Sprintf(format, args...)}
}

// Conflictf returns an error of kind ErrConflict.
func Conflictf(format string, args ...any) error {
	return &kindError{kind: ErrConflict, msg: fmt.Sprintf(format, args...)}
}

type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

// ErrorCode maps an error to the code used on every edge (HTTP, CLI --json,
// capture warnings): invalid, not_found, conflict, unauthorized, forbidden, too_large,
// llm_budget, llm_unavailable, llm_timeout, llm_output_malformed, llm_auth, unavailable or
// internal.
func ErrorCode(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrInvalid):
		return "invalid"
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrConflict):
		return "conflict"
	case errors.Is(err, ErrUnauthorized):
		return "unauthorized"
	case errors.Is(err, ErrForbidden):
		return "forbidden"
	case errors.Is(err, ErrTooLarge):
		return "too_large"
	case errors.Is(err, ErrLLMBudget):
		return "llm_budget"
	case errors.Is(err, ErrLLMAuth):
		return "llm_auth"
	case errors.Is(err, ErrLLMTimeout):
		return "llm_timeout"
	case errors.Is(err, ErrLLMOutputMalformed):
		return "llm_output_malformed"
	case errors.Is(err, ErrLLMUnavailable):
		return "llm_unavailable"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	default:
		return "internal"
	}
}
