package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// Names of the events the server streams.
const (
	EventCaptureStarted   = imprint.EventCaptureStarted
	EventCaptureDone      = imprint.EventCaptureDone
	EventCaptureFailed    = imprint.EventCaptureFailed
	EventExtractionDone   = imprint.EventExtractionDone
	EventExtractionFailed = imprint.EventExtractionFailed
)

// streamBuffer is how many events a slow event-stream client may fall
// behind before newer events are dropped for it.
const streamBuffer = 64

// sseMsg is one encoded event and the scope whose streams receive it.
type sseMsg struct {
	name  string
	data  []byte
	scope imprint.Scope
}

// hub fans events out to the open event streams. Publishing never blocks:
// a stream whose buffer is full misses the event.
type hub struct {
	mu     sync.Mutex
	subs   map[chan sseMsg]imprint.Scope
	done   chan struct{}
	closed bool
}

func newHub() *hub {
	return &hub{subs: map[chan sseMsg]imprint.Scope{}, done: make(chan struct{})}
}

// subscribe opens a stream of the events of scope.
func (h *hub) subscribe(scope imprint.Scope) (chan sseMsg, func()) {
	ch := make(chan sseMsg, streamBuffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.subs[ch] = scope
	}
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

func (h *hub) publish(m sseMsg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch, scope := range h.subs {
		if !sameScope(m.scope, scope) {
			continue
		}
		select {
		case ch <- m:
		default:
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

func sameScope(a, b imprint.Scope) bool {
	return a.Tenant == b.Tenant && a.User == b.User && a.Agent == b.Agent
}

var _ imprint.Publisher = (*Server)(nil)

// Publish counts e for /metrics (the counts of a payload that is an
// imprint.EventCounter, failures of *.failed) and streams it, named
// e.Type with its payload's JSON, to the open event streams of e.Scope
// only. An event without a valid scope goes to no stream: nothing is
// broadcast because whose it is was not said. A payload that cannot be
// encoded is logged and dropped.
func (s *Server) Publish(ctx context.Context, e imprint.Event) {
	s.metrics.observe(e)
	if err := e.Scope.Validate(); err != nil {
		s.log.DebugContext(ctx, "event without a scope not streamed", "event", e.Type, "error", err)
		return
	}
	b, err := json.Marshal(e.Payload)
	if err != nil {
		s.log.ErrorContext(ctx, "event not published", "event", e.Type, "err", err)
		return
	}
	s.hub.publish(sseMsg{name: eventName(e.Type), data: b, scope: e.Scope})
}

// eventName keeps a name on one line of the stream.
func eventName(name string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(name)
}

// getEvents streams server-sent events until the client goes away or the
// server closes: "event: <name>\ndata: <json>\n\n", with comment lines as
// heartbeats. Only events published with the caller's scope are sent.
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request) error {
	scope, err := queryScope(r)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	ch, unsubscribe := s.hub.subscribe(scope)
	defer unsubscribe()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte(": imprint events\n\n")); err != nil {
		return nil
	}
	if rc.Flush() != nil {
		return nil
	}
	tick := time.NewTicker(s.cfg.HeartbeatInterval)
	defer tick.Stop()
	for {
		var out []byte
		select {
		case <-r.Context().Done():
			return nil
		case <-s.hub.done:
			// Send what was published before Close, then end.
			for {
				select {
				case m := <-ch:
					out = appendEvent(out, m)
				default:
					_, _ = w.Write(out)
					_ = rc.Flush()
					return nil
				}
			}
		case <-tick.C:
			out = []byte(": heartbeat\n\n")
		case m := <-ch:
			out = appendEvent(nil, m)
		}
		if _, err := w.Write(out); err != nil {
			return nil
		}
		if rc.Flush() != nil {
			return nil
		}
	}
}

// appendEvent appends m in the event-stream format.
func appendEvent(out []byte, m sseMsg) []byte {
	out = append(out, "event: "...)
	out = append(out, m.name...)
	out = append(out, "\ndata: "...)
	out = append(out, m.data...)
	return append(out, "\n\n"...)
}
