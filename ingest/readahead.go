package ingest

import (
	"context"
	"sync"
	"time"

	"github.com/imprint-dev/imprint/importer"
)

// sourceRead is one source read into transcripts.
type sourceRead struct {
	trs   []importer.Transcript
	warns []importer.Warning
	err   error
}

// readAheadSources is how many sources are read ahead of the one being
// imported: enough to keep a reader busy while the writer works, few
// enough that a folder of large transcripts is not held in memory at once.
const readAheadSources = 4

// readAheadReaders is how many sources are read at once.
const readAheadReaders = 2

// readAhead reads sources with at most readAheadReaders goroutines, at
// most readAheadSources ahead of the consumer, each into its own channel
// (in source order). It owns its goroutines: close stops them and waits
// for them.
type readAhead struct {
	reads  []chan sourceRead
	slots  chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startReadAhead starts reading sources; the readers stop when ctx ends or
// close is called.
func startReadAhead(ctx context.Context, sources []Source, loc *time.Location) *readAhead {
	ctx, cancel := context.WithCancel(ctx)
	r := &readAhead{reads: make([]chan sourceRead, len(sources)), slots: make(chan struct{}, readAheadSources), cancel: cancel}
	for i := range r.reads {
		r.reads[i] = make(chan sourceRead, 1)
	}
	// A slot is taken before a source is handed to a reader, in source
	// order, and given back when the consumer took a read: the source the
	// consumer waits for always has its slot.
	next := make(chan int)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(next)
		for i := range sources {
			select {
			case r.slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range min(readAheadReaders, len(sources)) {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for i := range next {
				trs, ws, err := sources[i].Read(loc)
				// Each channel has room for its one read: this never blocks.
				r.reads[i] <- sourceRead{trs: trs, warns: ws, err: err}
			}
		}()
	}
	return r
}

// next returns the read of source i, taken in order, or ctx's error.
func (r *readAhead) next(ctx context.Context, i int) (sourceRead, error) {
	select {
	case rd := <-r.reads[i]:
		<-r.slots
		return rd, nil
	case <-ctx.Done():
		return sourceRead{}, ctx.Err()
	}
}

// close stops the readers and waits for them; a source being read is
// finished first.
func (r *readAhead) close() {
	r.cancel()
	r.wg.Wait()
}
