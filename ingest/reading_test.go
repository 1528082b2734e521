//go:build unix

package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/sqlite"
)

// claudeCodePipe returns a named pipe for a Claude Code transcript and the
// real transcript to write into it.
func claudeCodePipe(t *testing.T) (string, []byte) {
	t.Helper()
	body, err := os.ReadFile(testfiles.Path(t, "claude-code/representative_messages.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "session.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	return fifo, body
}

// importWhilePipeWaits runs im over sources, whose first is the named pipe
// fifo, and writes body into the pipe only once the sessions of ana (the
// other agent) are in db, failing with msg when they are not within wait.
// It returns the import's summary.
func importWhilePipeWaits(t *testing.T, im *Importer, db *sqlite.DB, sources []Source, fifo string, body []byte, wait time.Duration, msg string) *Summary {
	t.Helper()
	ctx := context.Background()
	type result struct {
		sum *Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := im.Run(ctx, sources)
		done <- result{sum, err}
	}()
	deadline := time.Now().Add(wait)
	for {
		ss, err := db.ListSessions(ctx, ana)
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Error(msg)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	return res.sum
}

// TestStartReadingReadsBeforeRun: StartReading starts reading the sources
// at once, before RunReading (the store is opened in between). The source
// is a named pipe holding a real Claude Code transcript: writing it blocks
// until a reader has opened it, so it is written only if the reading
// began without RunReading.
func TestStartReadingReadsBeforeRun(t *testing.T) {
	fifo, body := claudeCodePipe(t)
	ctx := context.Background()
	im := &Importer{Scope: imprint.Scope{Tenant: "t", User: "u", Agent: "a"}}
	rd := im.StartReading(ctx, []Source{{Path: fifo, Format: importer.FormatClaudeCode, Files: 1}})
	defer rd.Close()

	written := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until the pipe has a reader
		if err == nil {
			_, err = f.Write(body)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		// Unblock the writer before failing.
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("the source was not opened for reading before RunReading")
	}
	got, err := rd.reads[0].next(ctx, 0)
	if err != nil || got.err != nil {
		t.Fatalf("read: %v, %v", err, got.err)
	}
	if len(got.trs) != 1 || len(got.trs[0].Messages) < 2 {
		t.Fatalf("read %d transcripts (%+v), want the session with its messages", len(got.trs), got.trs)
	}
}

// TestAgentsImportAtOnce: the sources of two agents are imported at once.
// The Claude Code transcript (agent claude-code) is a named pipe written
// only once the τ-bench trajectories (the other agent) are in the store:
// importing the agents one after the other would wait for ever.
func TestAgentsImportAtOnce(t *testing.T) {
	fifo, body := claudeCodePipe(t)
	db := openDB(t)
	im := newImporter(t, db, nil)
	im.SourceAgents = true
	sources := append([]Source{{Path: fifo, Format: importer.FormatClaudeCode, Files: 1}}, tauSources(t, 40)...)
	sum := importWhilePipeWaits(t, im, db, sources, fifo, body, 30*time.Second,
		"the τ-bench trajectories were not imported while the Claude Code transcript was being read")
	ctx := context.Background()
	cc := ana
	cc.Agent = "claude-code"
	ccSessions, err := db.ListSessions(ctx, cc)
	if err != nil {
		t.Fatal(err)
	}
	tau, err := db.ListSessions(ctx, ana)
	if err != nil {
		t.Fatal(err)
	}
	if len(ccSessions) != 1 || len(tau) != 40 || sum.Transcripts != 41 || sum.Files != 2 {
		t.Errorf("%d Claude Code and %d τ-bench sessions, summary %d transcripts of %d files; want 1, 40, 41, 2",
			len(ccSessions), len(tau), sum.Transcripts, sum.Files)
	}
}

// countsProgress records the counts an import's progress is told.
type countsProgress struct {
	mu             sync.Mutex
	msgs, episodes []int
	advances       int
}

func (p *countsProgress) Update(s *Summary) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, s.MessagesRecorded)
}

func (p *countsProgress) Advance(s *Summary) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advances++
	p.msgs = append(p.msgs, s.MessagesRecorded)
}

func (p *countsProgress) Episodes(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.episodes = append(p.episodes, n)
}

func (p *countsProgress) Memories(int) {}

// TestAgentsImportProgress: with the agents imported at once, the progress
// counts the messages and episodes of both, never going back, and ends at
// the import's totals.
func TestAgentsImportProgress(t *testing.T) {
	db := openDB(t)
	im := newImporter(t, db, nil)
	im.SourceAgents = true
	bar := &countsProgress{}
	im.Progress = bar
	cc, _, err := CollectSources([]string{testfiles.Path(t, "claude-code")}, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	sources := append(cc, tauSources(t, 10)...)
	sum, err := im.Run(context.Background(), sources)
	if err != nil {
		t.Fatal(err)
	}
	for name, xs := range map[string][]int{"messages": bar.msgs, "episodes": bar.episodes} {
		for i := 1; i < len(xs); i++ {
			if xs[i] < xs[i-1] {
				t.Errorf("%s went back from %d to %d: %v", name, xs[i-1], xs[i], xs)
				break
			}
		}
	}
	if len(bar.msgs) == 0 || bar.msgs[len(bar.msgs)-1] != sum.MessagesRecorded || sum.MessagesRecorded == 0 {
		t.Errorf("messages shown %v, want them to end at the %d recorded", bar.msgs, sum.MessagesRecorded)
	}
	if len(bar.episodes) == 0 || bar.episodes[len(bar.episodes)-1] != sum.Episodes {
		t.Errorf("episodes shown end at %v, want the %d captured", bar.episodes, sum.Episodes)
	}
	if bar.advances != len(sources) {
		t.Errorf("%d sources advanced, want %d", bar.advances, len(sources))
	}
}

// TestAgentsImportAtOnceManySources is TestAgentsImportAtOnce with the
// Claude Code agent holding readAheadSources more (ordinary) transcripts
// after the pipe. One read-ahead shared by the agents, its slots taken in
// source order, would give the τ-bench source (after every Claude Code
// source) no slot until the Claude Code group had consumed its pipe: each
// agent has its own readers.
func TestAgentsImportAtOnceManySources(t *testing.T) {
	fifo, body := claudeCodePipe(t)
	db := openDB(t)
	im := newImporter(t, db, nil)
	im.SourceAgents = true
	sources := []Source{{Path: fifo, Format: importer.FormatClaudeCode, Files: 1}}
	dir := t.TempDir()
	for i := range readAheadSources {
		p := filepath.Join(dir, fmt.Sprintf("copy-%d.jsonl", i))
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
		sources = append(sources, Source{Path: p, Format: importer.FormatClaudeCode, Files: 1})
	}
	sources = append(sources, tauSources(t, 40)...)
	importWhilePipeWaits(t, im, db, sources, fifo, body, 15*time.Second,
		"the τ-bench trajectories were not imported while the Claude Code pipe was being read "+
			"(their source waits for a read-ahead slot held by the Claude Code group)")
}

// TestInvalidSourceAmongAgentsIsWarning: Run's contract is that a source
// that is not valid input is a warning when there are several. A bad
// Claude Code file among τ-bench files is the only source of its agent's
// group: it is a warning too, and the τ-bench files are imported.
func TestInvalidSourceAmongAgentsIsWarning(t *testing.T) {
	db := openDB(t)
	im := newImporter(t, db, nil)
	im.SourceAgents = true
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sources := append(tauSources(t, 2), Source{Path: bad, Format: importer.FormatClaudeCode, Files: 1})
	sum, err := im.Run(context.Background(), sources)
	if err != nil {
		t.Fatalf("import of %d sources, one of them bad: %v, want a warning", len(sources), err)
	}
	if len(sum.Warnings) == 0 || sum.Transcripts != 40 {
		t.Errorf("%d transcripts, warnings %v; want 40 and one for %s", sum.Transcripts, sum.Warnings, bad)
	}
}
