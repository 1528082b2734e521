package main

import (
	"errors"
	"fmt"

	"github.com/imprint-dev/imprint"
)

// Exit codes of imprint.
const (
	exitOK      = 0
	exitFailure = 1 // runtime failure
	exitUsage   = 2 // bad input, usage or configuration
)

// usageError marks a command-line usage error (unknown flag or command,
// wrong arguments); it exits 2 with code invalid.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitError carries an explicit exit code, for commands that have already
// printed their results and must still fail (doctor with a failed check,
// extract with a failed window).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withExitCode returns err so that imprint exits with code.
func withExitCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// exitCode maps an error to imprint's exit code. It is the only place that
// does: 0 ok; 2 for bad input: usage errors and errors of kind ErrInvalid,
// ErrConflict (e.g. capturing an episode id owned by another scope),
// ErrTooLarge or ErrNotFound (an id given that the scope does not have); 1
// for everything else.
func exitCode(err error, usage bool) int {
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case usage, errors.As(err, new(usageError)):
		return exitUsage
	case errors.Is(err, imprint.ErrInvalid), errors.Is(err, imprint.ErrConflict), errors.Is(err, imprint.ErrTooLarge),
		errors.Is(err, imprint.ErrNotFound):
		return exitUsage
	}
	return exitFailure
}

// errorCode is the §7 code printed with --json: invalid for usage errors,
// else imprint.ErrorCode.
func errorCode(err error, usage bool) string {
	if usage || errors.As(err, new(usageError)) {
		return "invalid"
	}
	return imprint.ErrorCode(err)
}

// finish reports err on Stderr (as {"error": {"code", "message"}} with
// --json, else as text) and returns the exit code.
func (a *App) finish(err error) int {
	if err == nil {
		return exitOK
	}
	// An error before setup ran is a usage error from cobra (unknown
	// command, bad arguments), which cobra reports as plain errors.
	usage := !a.started
	code := exitCode(err, usage)
	if a.JSON {
		var out struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		out.Error.Code = errorCode(err, usage)
		out.Error.Message = err.Error()
		enc := newJSONEncoder(a.Stderr)
		_ = enc.Encode(out)
		return code
	}
	fmt.Fprintf(a.Stderr, "imprint: %v\n", err)
	if code == exitUsage && (usage || errors.As(err, new(usageError))) {
		fmt.Fprintln(a.Stderr, "Run 'imprint --help' for usage.")
	}
	return code
}
