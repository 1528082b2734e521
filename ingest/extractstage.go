package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/importer"
)

// extractStage runs extraction over the pending messages of the sessions
// handed to it, one session at a time, in the order they were handed, in
// its own goroutine, so that it overlaps with the import of the next
// sources. A failed window leaves its messages pending (a later import or
// imprint extract retries them) and is reported as a warning. It owns its
// goroutine: finish waits for it.
type extractStage struct {
	sessions chan string
	done     chan struct{}
	err      error
	mem      MemoryDecisions
	warns    []importer.Warning
	ctx      context.Context
	cancel   context.CancelFunc
	// refused is the LLM budget's refusal that stopped extraction
	// cleanly: the sessions after it keep their messages pending.
	refused error
}

// extractQueue bounds the sessions waiting for extraction; extractBatch is
// the most extracted together.
const (
	extractQueue = 256
	extractBatch = 64
)

func startExtract(ctx context.Context, r *extract.Runner, scope imprint.Scope, bar Progress) *extractStage {
	ctx, cancel := context.WithCancel(ctx)
	x := &extractStage{sessions: make(chan string, extractQueue), done: make(chan struct{}), ctx: ctx, cancel: cancel}
	go func() {
		defer close(x.done)
		for sid := range x.sessions {
			// Take the sessions already waiting too: without an LLM their
			// windows are planned together and their records lines synced
			// once.
			batch := []string{sid}
		drain:
			for len(batch) < extractBatch {
				select {
				case s, ok := <-x.sessions:
					if !ok {
						break drain
					}
					batch = append(batch, s)
				default:
					break drain
				}
			}
			if x.refused != nil {
				continue // stopped at the LLM budget: the rest stays pending
			}
			err := r.ExtractSessions(ctx, scope, batch, func(res extract.Result) {
				x.mem.Store += res.Decisions.Store
				x.mem.Update += res.Decisions.Update
				x.mem.Merge += res.Decisions.Merge
				x.mem.Skip += res.Decisions.Skip
				for _, w := range res.Warnings {
					if w.Code == imprint.ErrorCode(imprint.ErrLLMBudget) {
						continue // reported once, as the stop
					}
					x.warns = append(x.warns, importer.Warning{File: res.SessionID, Message: fmt.Sprintf("extract: %s/%s: %s", w.Stage, w.Code, w.Message)})
				}
				bar.Memories(res.Decisions.Store + res.Decisions.Update + res.Decisions.Merge)
			}, func(sid string, err error) {
				if errors.Is(err, imprint.ErrLLMBudget) {
					x.refused = err
					return
				}
				x.warns = append(x.warns, importer.Warning{File: sid, Message: "extraction stopped, messages stay pending: " + err.Error()})
			})
			if err != nil {
				x.err = err
				return
			}
		}
	}()
	return x
}

// add hands a session to extraction; it waits while the queue is full. A
// session handed again (its messages came in several sources) is extracted
// again, for what is new.
func (x *extractStage) add(sid string) error {
	select {
	case x.sessions <- sid:
		return nil
	case <-x.done:
		if x.err != nil {
			return x.err
		}
		return errors.New("extraction stopped")
	case <-x.ctx.Done():
		return x.ctx.Err()
	}
}

// finish waits for the handed sessions to be extracted; with abort it
// stops extraction at its next window instead.
func (x *extractStage) finish(abort bool) error {
	if abort {
		x.cancel()
	}
	close(x.sessions)
	<-x.done
	x.cancel()
	return x.err
}

// addTo adds the stage's counts and warnings to sum (once finished).
func (x *extractStage) addTo(sum *Summary) {
	sum.Memories.Store += x.mem.Store
	sum.Memories.Update += x.mem.Update
	sum.Memories.Merge += x.mem.Merge
	sum.Memories.Skip += x.mem.Skip
	sum.Warnings = append(sum.Warnings, x.warns...)
}
