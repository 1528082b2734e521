package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/extract"
)

// ExtractNow runs extraction over the pending messages of sessionID, or of
// every session of scope when sessionID is "", oldest window first, until
// none is pending (imprint extract). each is called with every window
// that consumed messages, or failed. It stops at the first failed window
// and returns its error naming the session; ErrInvalid for a session the
// scope does not have.
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
	for _, sid := range sessions {
		var eachErr error
		err := r.ExtractPending(ctx, scope, sid, func(res extract.Result) {
			if (len(res.MessageIDs) == 0 && res.Success) || eachErr != nil {
				return
			}
			eachErr = each(res)
		})
		if eachErr != nil {
			return eachErr
		}
		if err != nil {
			return fmt.Errorf("extract session %s: %w", sid, err)
		}
	}
	return nil
}
