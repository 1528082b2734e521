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
	if s.d.Ingest != nil {
		// every_n_rounds reached: the session's extraction is queued now
		// rather than at the planner's next tick; messages stored without
		// a vector get the embedding retry.
		s.d.Ingest.MessagesRecorded(r.Context(), scope, imprint.Recorded{SessionID: sid, Messages: res.RecordedCount,
			Unembedded: res.RecordedCount - res.VectorsWritten, ExtractionDue: res.SchedulerNotified})
	}
	return writeJSON(w, http.StatusOK, res)
}
