package capture

import (
	"context"
	"sync"
	"sync/atomic"

	imprint "github.com/imprint-dev/imprint"
)

// SubscriberWorkers is how many episodes a Subscriber captures at once; each
// capture bounds its own LLM calls with LLMConcurrency.
const SubscriberWorkers = 2

// Subscriber runs captures for the episodes announced as closed
// (imprint.EventEpisodeFinalized), in the background. It is an
// imprint.Publisher: give it to the session manager (alone or among
// imprint.Publishers). Create it with Attach.
type Subscriber struct {
	ctx    context.Context
	cancel context.CancelFunc
	r      *Runner
	cfg    Config

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []imprint.EpisodeEvent
	pending int
	stopped bool
	live    atomic.Int32 // running workers; the last one to exit releases ctx
	onError func(imprint.Episode, error)
}

// Attach returns a Subscriber that captures each episode announced as
// closed with r, fire-and-forget, SubscriberWorkers at a time. Abandoned
// episodes are skipped when cfg.CaptureAbandoned is off. Captures run under
// a context derived from ctx; cancelling ctx cancels them. Call Stop to
// detach and Drain to wait for the captures already announced.
var _ imprint.Publisher = (*Subscriber)(nil)

func Attach(ctx context.Context, r *Runner, cfg Config) *Subscriber {
	sctx, cancel := context.WithCancel(ctx)
	s := &Subscriber{ctx: sctx, cancel: cancel, r: r, cfg: cfg}
	s.cond = sync.NewCond(&s.mu)
	s.live.Store(SubscriberWorkers)
	for range SubscriberWorkers {
		go s.work()
	}
	return s
}

// OnError sets a function called with each capture that failed (after it
// was logged). Set it before events arrive.
func (s *Subscriber) OnError(fn func(ep imprint.Episode, err error)) {
	s.mu.Lock()
	s.onError = fn
	s.mu.Unlock()
}

func closedByOf(e imprint.EpisodeEvent) imprint.ClosedBy {
	if e.ClosedBy != "" {
		return e.ClosedBy
	}
	if e.Episode.ClosedBy != "" {
		return e.Episode.ClosedBy
	}
	return imprint.ClosedFinalized
}

// Publish queues the capture of the episode of an EventEpisodeFinalized;
// it ignores other events, and every event once the subscriber stopped.
func (s *Subscriber) Publish(_ context.Context, ev imprint.Event) {
	e, ok := ev.Payload.(imprint.EpisodeEvent)
	if ev.Type != imprint.EventEpisodeFinalized || !ok {
		return
	}
	if closedByOf(e) == imprint.ClosedAbandoned && !s.cfg.CaptureAbandoned {
		s.r.log.capture.Debug("subscriber skipped abandoned episode", "episode_id", e.Episode.ID, "session_id", e.Episode.SessionID)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.queue = append(s.queue, e)
	s.pending++
	s.cond.Broadcast()
}

func (s *Subscriber) work() {
	defer func() {
		if s.live.Add(-1) == 0 {
			s.cancel()
		}
	}()
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.stopped {
			s.cond.Wait()
		}
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		e := s.queue[0]
		s.queue = s.queue[1:]
		onError := s.onError
		s.mu.Unlock()

		if _, err := s.r.Run(s.ctx, e.Episode, closedByOf(e)); err != nil {
			s.r.log.capture.Error("background capture failed", "episode_id", e.Episode.ID, "session_id", e.Episode.SessionID, "error", err)
			if onError != nil {
				onError(e.Episode, err)
			}
		}

		s.mu.Lock()
		s.pending--
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// Pending returns how many announced captures have not finished.
func (s *Subscriber) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

// Drain waits until every capture announced so far (and any announced while
// waiting) has finished.
func (s *Subscriber) Drain() {
	s.mu.Lock()
	for s.pending > 0 {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// Stop detaches: later announcements are ignored.
// Captures already announced still run; Drain waits for them. After they
// finish the workers exit and the subscriber's context is released.
func (s *Subscriber) Stop() {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		s.cond.Broadcast()
	}
	s.mu.Unlock()
}
