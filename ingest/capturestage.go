package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
)

// captureStage captures the episodes of the transcripts handed to it with
// a few workers, so that capture overlaps with recording the next
// transcripts and the work of one episode (steps, scores, vectors) with
// the store write of another. Episodes are independent: each has its own
// derived id and traces. It owns its workers: finish waits for them.
type captureStage struct {
	eps    chan captureJob
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc

	mu  sync.Mutex
	err error
	// refused is the LLM budget's refusal that stopped capture cleanly;
	// left counts the episodes not captured since.
	refused error
	left    int
	sum     Summary // episodes and traces
	// warns are the warnings of each job, merged in job order at the end.
	warns map[int][]importer.Warning
	jobs  int
}

// captureJob is one episode of a transcript to capture.
type captureJob struct {
	n         int
	sessionID string
	ep        imprint.Episode
}

// Capture workers, queued episodes, and the most episodes saved in one
// transaction.
const (
	captureWorkers = 2
	captureQueue   = 256
	captureBatch   = 16
)

func (im *Importer) startCapture(ctx context.Context, bar Progress) *captureStage {
	ctx, cancel := context.WithCancel(ctx)
	x := &captureStage{eps: make(chan captureJob, captureQueue), ctx: ctx, cancel: cancel, warns: map[int][]importer.Warning{}}
	for range captureWorkers {
		x.wg.Add(1)
		go func() {
			defer x.wg.Done()
			for j := range x.eps {
				// Take the episodes already waiting too, up to captureBatch,
				// and save them in one transaction.
				jobs := []captureJob{j}
			more:
				for len(jobs) < captureBatch {
					select {
					case j, ok := <-x.eps:
						if !ok {
							break more
						}
						jobs = append(jobs, j)
					default:
						break more
					}
				}
				x.mu.Lock()
				stopped := x.refused != nil
				if stopped {
					x.left += len(jobs)
				}
				x.mu.Unlock()
				if ctx.Err() != nil || stopped {
					continue // drain
				}
				sums, err := im.captureEpisodes(ctx, jobs)
				x.mu.Lock()
				switch {
				case errors.Is(err, imprint.ErrLLMBudget):
					// A clean stop: the episodes captured so far are
					// saved, the others are captured by the next import.
					x.refused = err
					for _, one := range sums {
						if one.Episodes+one.EpisodesSkipped == 0 {
							x.left++
						}
					}
				case err != nil:
					if x.err == nil {
						x.err = err
					}
					cancel()
				}
				for i, one := range sums {
					x.sum.Episodes += one.Episodes
					x.sum.EpisodesSkipped += one.EpisodesSkipped
					x.sum.Traces += one.Traces
					if len(one.Warnings) > 0 {
						x.warns[jobs[i].n] = one.Warnings
					}
				}
				eps := x.sum.Episodes
				x.mu.Unlock()
				bar.Episodes(eps)
			}
		}()
	}
	return x
}

// captureEpisodes captures the new or grown episodes of jobs with one
// read of the stored ones and one RunMany (one store transaction) and
// returns each job's counts and
// warnings.
func (im *Importer) captureEpisodes(ctx context.Context, jobs []captureJob) ([]Summary, error) {
	sums := make([]Summary, len(jobs))
	var run []imprint.Episode
	var idx []int
	in := make([]imprint.Episode, len(jobs))
	for i, j := range jobs {
		in[i] = j.ep
	}
	eps, skip, err := im.episodesToCapture(ctx, in)
	if err != nil {
		return sums, err
	}
	for i, ep := range eps {
		if skip[i] {
			sums[i].EpisodesSkipped++
			continue
		}
		run = append(run, ep)
		idx = append(idx, i)
	}
	if len(run) == 0 {
		return sums, nil
	}
	res, err := im.Capture.RunMany(ctx, run, "")
	if err != nil && !errors.Is(err, imprint.ErrLLMBudget) {
		return sums, fmt.Errorf("capture episodes of %s: %w", jobs[idx[0]].sessionID, err)
	}
	// After a budget refusal res holds the episodes saved before it.
	for k, i := range idx[:len(res)] {
		sums[i].Episodes++
		sums[i].Traces += len(res[k].Traces)
		for _, w := range res[k].Warnings {
			sums[i].Warnings = append(sums[i].Warnings, importer.Warning{File: jobs[i].sessionID,
				Message: fmt.Sprintf("capture %s: %s/%s: %s", run[k].ID, w.Stage, w.Code, w.Message)})
		}
	}
	if err != nil {
		return sums, fmt.Errorf("capture episodes of %s: %w", jobs[idx[0]].sessionID, err)
	}
	return sums, nil
}

// add hands the episodes of a transcript to capture; it waits while the
// queue is full.
func (x *captureStage) add(tr importer.Transcript) error {
	for _, ep := range tr.Episodes {
		j := captureJob{n: x.jobs, sessionID: tr.SessionID, ep: ep}
		x.jobs++
		select {
		case x.eps <- j:
		case <-x.ctx.Done():
			x.mu.Lock()
			defer x.mu.Unlock()
			if x.err != nil {
				return x.err
			}
			return x.ctx.Err()
		}
	}
	return nil
}

// finish waits for the handed episodes to be captured; with abort it
// stops capture instead.
func (x *captureStage) finish(abort bool) error {
	if abort {
		x.cancel()
	}
	close(x.eps)
	x.wg.Wait()
	x.cancel()
	return x.err
}

// addTo adds the stage's counts and warnings to sum (once finished).
func (x *captureStage) addTo(sum *Summary) {
	sum.Episodes += x.sum.Episodes
	sum.EpisodesSkipped += x.sum.EpisodesSkipped
	sum.Traces += x.sum.Traces
	for n := range x.jobs {
		sum.Warnings = append(sum.Warnings, x.warns[n]...)
	}
}
