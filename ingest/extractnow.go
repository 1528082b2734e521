package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/extract"
)

// WindowError is the error of an extraction that handed a window to its
// caller: the window failed (its messages stay pending; a service retries
// them), or what the caller did with it failed. imprint extract exits 1 for
// it, after printing the window.
type WindowError struct{ Err error }

// Error returns the window's error text.
func (e *WindowError) Error() string { return e.Err.Error() }

// Unwrap returns the window's error.
func (e *WindowError) Unwrap() error { return e.Err }

// ExtractNow runs extraction over the pending messages of sessionID, or of
// every session of scope when sessionID is "", oldest window first, until
// none is pending (imprint extract). each is called with every window
// that consumed messages, or failed. It stops at the first failed window,
// or the first error of each, with a *WindowError naming the session;
// ErrInvalid for a session the scope does not have.
func ExtractNow(ctx context.Context, st imprint.SessionStore, r *extract.Runner, scope imprint.Scope, sessionID string, each func(extract.Result) error) error {
	sessions := []string{sessionID}
	if sessionID == "" {
		ss, err := st.ListSessions(ctx, scope)
		if err != nil {
			return err
		}
		sessions = sessions[:0]
		for _, s := range ss {
			sessions = append(sessions, s.ID)
		}
	} else if _, err := st.GetSession(ctx, scope, sessionID); err != nil {
		if errors.Is(err, imprint.ErrNotFound) {
			return imprint.Invalidf("session %q: no such session in scope %s", sessionID, scope)
		}
		return err
	}
	windows := 0
	for _, sid := range sessions {
		var eachErr error
		err := r.ExtractPending(ctx, scope, sid, func(res extract.Result) {
			if (len(res.MessageIDs) == 0 && res.Success) || eachErr != nil {
				return
			}
			windows++
			eachErr = each(res)
		})
		if eachErr != nil {
			return &WindowError{eachErr}
		}
		if err != nil {
			err = fmt.Errorf("extract session %s: %w", sid, err)
			if errors.Is(err, imprint.ErrInvalid) && windows == 0 {
				return err
			}
			return &WindowError{err}
		}
	}
	return nil
}

// EndNow extracts the pending messages of a host's session before
// answering (the end_session of imprint mcp on a data dir): it returns how
// many messages were pending and how many memories the extraction stored
// or updated.
func EndNow(ctx context.Context, st imprint.MessageStore, r *extract.Runner, scope imprint.Scope, sessionID string) (pending, stored int, err error) {
	if pending, err = st.CountPending(ctx, scope, sessionID); err != nil {
		return 0, 0, err
	}
	err = r.ExtractPending(ctx, scope, sessionID, func(res extract.Result) { stored += res.StoredCount })
	return pending, stored, err
}

// ExtractTotals sums the windows of an extraction run window after window
// (imprint extract's last line).
type ExtractTotals struct {
	Windows int `json:"windows"`
	// Stored counts the memories the windows stored or updated.
	Stored int `json:"memories_stored"`
}

// Add counts the window res.
func (t *ExtractTotals) Add(res extract.Result) {
	t.Windows++
	t.Stored += res.StoredCount
}

// WriteText writes the totals as imprint extract prints them.
func (t ExtractTotals) WriteText(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "%d windows, %d memories stored or updated\n", t.Windows, t.Stored); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
