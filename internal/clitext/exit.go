package clitext

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/imprint-dev/imprint"
)

// Exit codes of imprint.
const (
	ExitOK      = 0
	ExitFailure = 1 // runtime failure
	ExitUsage   = 2 // bad input, usage or configuration
)

// UsageError marks a command-line usage error (unknown flag or command,
// wrong arguments, a missing flag); it exits 2 with code invalid, and the
// text form adds where to read the usage.
type UsageError struct{ Err error }

// Error returns the usage error's text.
func (e UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the error the usage error marks.
func (e UsageError) Unwrap() error { return e.Err }

// exitError carries an explicit exit code, for commands that have already
// printed their results and must still fail (doctor with a failed check,
// extract with a failed window).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// WithExitCode returns err so that imprint exits with code (nil stays
// nil).
func WithExitCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// ExitCode maps an error to imprint's exit code. It is the only place that
// does: 0 ok; an explicit WithExitCode code; 2 for bad input: usage errors
// (or any error when usage says it came before the command ran) and
// errors of kind ErrInvalid, ErrConflict (e.g. capturing an episode id
// owned by another scope), ErrTooLarge or ErrNotFound; 1 for everything
// else.
func ExitCode(err error, usage bool) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case usage, errors.As(err, new(UsageError)):
		return ExitUsage
	case errors.Is(err, imprint.ErrInvalid), errors.Is(err, imprint.ErrConflict), errors.Is(err, imprint.ErrTooLarge),
		errors.Is(err, imprint.ErrNotFound):
		return ExitUsage
	}
	return ExitFailure
}

// ErrorCode is the §7 code printed with --json: invalid for usage errors,
// else imprint.ErrorCode.
func ErrorCode(err error, usage bool) string {
	if usage || errors.As(err, new(UsageError)) {
		return "invalid"
	}
	return imprint.ErrorCode(err)
}

// WriteError reports err on w, as {"error": {"code", "message"}} with
// asJSON, else as "imprint: message" (with where to read the usage for a
// usage error), and returns the exit code. usage says err came before
// the command ran: cobra's own errors (unknown command, bad arguments).
func WriteError(w io.Writer, err error, asJSON, usage bool) int {
	if err == nil {
		return ExitOK
	}
	code := ExitCode(err, usage)
	if asJSON {
		var out struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		out.Error.Code = ErrorCode(err, usage)
		out.Error.Message = err.Error()
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(out)
		return code
	}
	fmt.Fprintf(w, "imprint: %v\n", err)
	if code == ExitUsage && (usage || errors.As(err, new(UsageError))) {
		fmt.Fprintln(w, "Run 'imprint --help' for usage.")
	}
	return code
}
