package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Throttle is the least time between two drawings of a bar made by
// ForTerminal.
const Throttle = 100 * time.Millisecond

// Bar shows an import's progress. The zero Bar (or one made by ForTerminal
// for a writer that is no terminal) draws nothing and all its methods do
// nothing. A Bar is safe for concurrent use (extraction counts memories
// while the import goes on).
type Bar struct {
	bar *progressbar.ProgressBar

	files int // sources to import

	mu             sync.Mutex
	done           int // sources imported
	msgs, eps, mem int
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ForTerminal returns a bar over files sources drawn on w, at most once per
// Throttle, when isTerminal(w) (IsTerminal when nil); else a Bar that draws
// nothing.
func ForTerminal(w io.Writer, files int, isTerminal func(io.Writer) bool) *Bar {
	if isTerminal == nil {
		isTerminal = IsTerminal
	}
	if !isTerminal(w) {
		return &Bar{}
	}
	return New(w, files, Throttle)
}

// New draws a bar over files sources on w, at most once per throttle, with
// the counts of messages, episodes and memories as its description; it is
// cleared when finished.
func New(w io.Writer, files int, throttle time.Duration) *Bar {
	return &Bar{files: files, bar: progressbar.NewOptions(files,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("importing"),
		progressbar.OptionThrottle(throttle),
		progressbar.OptionClearOnFinish(),
	)}
}

// describe shows the counts; b.mu is held.
func (b *Bar) describe() {
	b.bar.Describe(fmt.Sprintf("files %d/%d · messages %d · episodes %d · memories %d", b.done, b.files, b.msgs, b.eps, b.mem))
}

// Update shows messages recorded so far and episodes captured (never fewer
// episodes than shown already).
func (b *Bar) Update(messages, episodes int) {
	if b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = messages
	b.eps = max(b.eps, episodes)
	b.describe()
}

// Episodes shows that n episodes are captured.
func (b *Bar) Episodes(n int) {
	if b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.eps = n
	b.describe()
}

// Memories adds n more extracted memories.
func (b *Bar) Memories(n int) {
	if b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mem += n
	b.describe()
}

// Advance counts one more source done and shows the counts as Update does.
func (b *Bar) Advance(messages, episodes int) {
	if b.bar == nil {
		return
	}
	b.mu.Lock()
	b.done++
	b.mu.Unlock()
	b.Update(messages, episodes)
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.bar.Add(1)
}

// Finish completes the bar and clears it.
func (b *Bar) Finish() {
	if b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.bar.Finish()
}
