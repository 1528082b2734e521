package clitext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint"
)

func TestExitCodes(t *testing.T) {
	t.Parallel()
	// ExitCode is the one place errors become exit codes.
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{UsageError{os.ErrInvalid}, 2},
		{fmt.Errorf("wrapped invalid: %w", imprint.Invalidf("field x is required")), 2},
		{imprint.Conflictf("episode e belongs to another scope"), 2},
		{os.ErrNotExist, 1},
		{WithExitCode(1, imprint.Invalidf("field x is required")), 1},
	}
	for _, tt := range tests {
		if got := ExitCode(tt.err, false); got != tt.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
	if got := ExitCode(os.ErrNotExist, true); got != 2 {
		t.Errorf("ExitCode before the command ran = %d, want 2", got)
	}
}

// TestWriteError: the error line a user reads, or the one JSON object a
// script parses, with the usage hint only for usage errors.
func TestWriteError(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if code := WriteError(&b, UsageError{imprint.Invalidf("forget needs --session or --before")}, false, false); code != 2 {
		t.Errorf("code %d, want 2", code)
	}
	if got := b.String(); !strings.HasPrefix(got, "imprint: ") || !strings.Contains(got, "forget needs --session") || !strings.Contains(got, "imprint --help") {
		t.Errorf("usage error text %q", got)
	}
	b.Reset()
	if code := WriteError(&b, fmt.Errorf("open store: %w", imprint.ErrUnavailable), false, false); code != 1 || strings.Contains(b.String(), "--help") {
		t.Errorf("runtime error: code %d, text %q", code, b.String())
	}
	b.Reset()
	if code := WriteError(&b, imprint.Invalidf("a <b> & c"), true, false); code != 2 {
		t.Errorf("code %d, want 2", code)
	}
	var out struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(b.Bytes(), &out); err != nil || out.Error.Code != "invalid" || !strings.Contains(b.String(), "a <b> & c") {
		t.Errorf("json error %q (%v): want code invalid and the message unescaped", b.String(), err)
	}
}
