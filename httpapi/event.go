package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
)

// Names of the events the server streams.
const (
	EventCaptureStarted   = capture.EventStarted
	EventCaptureDone      = capture.EventDone
	EventCaptureFailed    = capture.EventFailed
	EventExtractionDone   = "extraction.done"
	EventExtractionFailed = "extraction.failed"
)

// streamBuffer is how many events a slow event-stream client may fall
// behind before newer events are dropped for it.
const streamBuffer = 64

// sseMsg is one encoded event. scope is nil when the event's scope is not
// known: it then goes to the administrator's streams only.
type sseMsg struct {
	name  string
	data  []byte
	scope *imprint.Scope
}

// hub fans events out to the open event streams. Publishing never blocks:
// a stream whose buffer is full misses the event.
type hub struct {
	mu     sync.Mutex
	subs   map[chan sseMsg]subscriber
	done   chan struct{}
	closed bool
}

// subscriber is what one stream receives: events of its scope, and with
// unscoped set those whose scope is not known.
type subscriber struct {
	scope    imprint.Scope
	unscoped bool
}

func newHub() *hub {
	return &hub{subs: map[chan sseMsg]subscriber{}, done: make(chan struct{})}
}

func (h *hub) subscribe(sub subscriber) (chan sseMsg, func()) {
	ch := make(chan sseMsg, streamBuffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.subs[ch] = sub
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
	for ch, sub := range h.subs {
		if m.scope == nil && !sub.unscoped || m.scope != nil && !sameScope(*m.scope, sub.scope) {
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

// Publish streams an event named name with data's JSON to the open event
// streams and counts it for /metrics (traces of capture.done, memory
// decisions of extraction.done, failures of *.failed). When data reveals
// its scope (a capture event or result with traces, an extraction result
// with records, an episode, or a value with an EventScope method) only
// streams of that scope receive it; otherwise only the administrator's
// streams do (never an API key's). Data that
// cannot be encoded is logged and dropped.
func (s *Server) Publish(name string, data any) {
	s.metrics.observe(name, data)
	b, err := json.Marshal(data)
	if err != nil {
		s.log.Error("event not published", "event", name, "err", err)
		return
	}
	s.hub.publish(sseMsg{name: eventName(name), data: b, scope: eventScope(data)})
}

// PublishScoped is Publish for an event of a known scope.
func (s *Server) PublishScoped(scope imprint.Scope, name string, data any) {
	s.metrics.observe(name, data)
	b, err := json.Marshal(data)
	if err != nil {
		s.log.Error("event not published", "event", name, "err", err)
		return
	}
	s.hub.publish(sseMsg{name: eventName(name), data: b, scope: &scope})
}

// eventName keeps a name on one line of the stream.
func eventName(name string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(name)
}

// eventScope finds the scope of an event's data, or nil.
func eventScope(data any) *imprint.Scope {
	var sc imprint.Scope
	switch d := data.(type) {
	case interface{ EventScope() imprint.Scope }:
		sc = d.EventScope()
	case capture.Event:
		if d.Result == nil || len(d.Result.Traces) == 0 {
			return nil
		}
		sc = d.Result.Traces[0].Scope
	case *capture.Event:
		return eventScope(*d)
	case capture.Result:
		return eventScope(&d)
	case *capture.Result:
		if len(d.Traces) == 0 {
			return nil
		}
		sc = d.Traces[0].Scope
	case extract.Result:
		return eventScope(&d)
	case *extract.Result:
		if len(d.Records) == 0 {
			return nil
		}
		sc = d.Records[0].Scope
	case imprint.Episode:
		sc = d.Scope
	case *imprint.Episode:
		sc = d.Scope
	default:
		return nil
	}
	if sc.Validate() != nil {
		return nil
	}
	return &sc
}

// getEvents streams server-sent events until the client goes away or the
// server closes: "event: <name>\ndata: <json>\n\n", with comment lines as
// heartbeats. Only events of the caller's scope are sent, and to the
// administrator those of no known scope too; an API key's holder never
// gets an event it cannot prove is its own.
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request) error {
	scope, err := queryScope(r)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	ch, unsubscribe := s.hub.subscribe(subscriber{scope: scope, unscoped: principalOf(r).key == nil})
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
