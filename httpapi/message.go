package httpapi

import (
	"bytes"
	"net/http"
	"strings"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/wire"
)

// postMessages records a §4.2 body as L0 messages → 200 §5.3.
func (s *Server) postMessages(w http.ResponseWriter, r *http.Request) error {
	body, fields, err := s.readObject(w, r, false)
	if err != nil {
		return err
	}
	scope, err := scopeOf(r, fields)
	if err != nil {
		return err
	}
	sid, err := stringField(fields, "session_id")
	if err != nil {
		return err
	}
	if strings.TrimSpace(sid) == "" {
		return imprint.Invalidf("session_id is required")
	}
	if !present(fields, "messages") {
		return imprint.Invalidf("messages is required")
	}
	if err := s.checkCount(fields, "messages"); err != nil {
		return err
	}
	doc, err := wire.ReadMessageDoc(bytes.NewReader(body), "", sid)
	if err != nil {
		return err
	}
	if doc.BetweenPeople {
		// Not silently dropped: imprint import and imprint record take it.
		return imprint.Invalidf("between_people: not supported by POST /v1/messages yet")
	}
	sid, msgs := doc.SessionID, doc.Messages
	if s.d.Recorder == nil {
		return errNoRecorder
	}
	res, err := s.d.Recorder.Record(r.Context(), scope, sid, msgs)
	if err != nil {
		return err
	}
	s.metrics.messagesRecorded.Add(int64(res.RecordedCount))
	if res.SchedulerNotified && s.d.Jobs != nil {
		// every_n_rounds reached: queue the session's extraction now rather
		// than at the planner's next tick (unique per session, so this
		// joins a job already queued). The messages are recorded either
		// way; a failed enqueue leaves the session due for the planner.
		if _, err := s.d.Jobs.Enqueue(r.Context(), imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: sid,
			UniqueKey: imprint.ExtractJobKey(scope, sid)}); err != nil {
			s.log.Warn("queue extraction of a due session failed", "session_id", sid, "error", err)
		}
		s.wake()
	}
	return writeJSON(w, http.StatusOK, res)
}
