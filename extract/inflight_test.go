package extract

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/shard"
)

// dyingStore lets ok memory writes through, then "dies": it calls onDeath
// (which saves the files on disk as they are at that moment) and fails
// every write after.
type dyingStore struct {
	imprint.Store
	ok      int
	dead    bool
	onDeath func()
}

func (s *dyingStore) PutMemory(ctx context.Context, m imprint.Memory, supersede []string) error {
	if s.ok <= 0 {
		if !s.dead {
			s.dead = true
			s.onDeath()
		}
		return errCrash
	}
	s.ok--
	return s.Store.PutMemory(ctx, m, supersede)
}

// snapshotDir returns the files under dir, by path relative to it.
func snapshotDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// restoreDir makes dir hold exactly the files of snap.
func restoreDir(t *testing.T, dir string, snap map[string][]byte) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for rel, b := range snap {
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// crashAt runs run over a store that dies after ok memory writes and
// leaves the records folder as it was when the process died: the window's
// lines and its marker synced, none of what the dying process did after
// (its withdraw lines, the marker's removal).
func (e *testEnv) crashAt(deps Deps, ok int, run func(*Runner) error) {
	e.t.Helper()
	var snap map[string][]byte
	deps.Store = &dyingStore{Store: e.db, ok: ok, onDeath: func() { snap = snapshotDir(e.t, e.dir) }}
	if err := run(NewRunner(deps, e.cfg)); !errors.Is(err, errCrash) {
		e.t.Fatalf("crashing run = %v, want the simulated crash", err)
	}
	if snap == nil {
		e.t.Fatal("the store never died")
	}
	restoreDir(e.t, e.dir, snap)
}

// markers returns the names of the in-flight markers left on disk.
func (e *testEnv) markers() []string {
	e.t.Helper()
	des, err := os.ReadDir(filepath.Join(e.dir, shard.JournalDirName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

// replayed returns the memories a replay of the log into an empty store
// gives, sorted by id.
func (e *testEnv) replayed() []imprint.Memory {
	e.t.Helper()
	fresh := openDB(e.t)
	if _, err := ReplayWith(e.ctx, fresh, shard.Dir(e.dir), nil); err != nil {
		e.t.Fatal(err)
	}
	ms, err := fresh.ListMemories(e.ctx, e.scope, imprint.MemoryFilter{Limit: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	return sortByID(ms)
}

func sortByID(ms []imprint.Memory) []imprint.Memory {
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	return ms
}

// checkReplayIsLive fails unless replaying the log gives exactly the
// store's live memories, with their ids.
func (e *testEnv) checkReplayIsLive() {
	e.t.Helper()
	if diff := cmp.Diff(sortByID(e.live()), e.replayed(), memoryView, cmpIgnoreEmbedder); diff != "" {
		e.t.Errorf("replayed memories (-live +replayed):\n%s", diff)
	}
}

var cmpIgnoreEmbedder = cmpopts.IgnoreFields(imprint.Memory{}, "Embedder")

// versionedExtractor answers OpExtract like rememberExtractor on its first
// call and, after that, with other memories for the same messages (as a
// varying LLM would): the first fact again, the others reworded.
func versionedExtractor(t *testing.T) func(llmtest.Request) llmtest.Reply {
	var calls atomic.Int32
	return func(r llmtest.Request) llmtest.Reply {
		redo := calls.Add(1) > 1
		p := parsePrompt(t, r.User)
		s := scene{Name: "Facts", IDs: p.newIDs()}
		for i, m := range p.New {
			fact, ok := strings.CutPrefix(m.Content, "remember: ")
			if !ok {
				continue
			}
			if redo && i > 0 {
				fact = "Reworded: " + fact
			}
			s.Memories = append(s.Memories, mem{Content: fact, Type: "persona", Priority: 60, Sources: []string{m.ID}})
		}
		return scenesReply(s)
	}
}

// A process that dies between a window's log sync and its store writes
// leaves lines of memories no store holds; when the window is redone and
// the LLM now gives other memories, those lines are withdrawn, so a replay
// of the log gives exactly the live memories.
func TestCrashedWindowRedoneWithOtherMemoriesLeavesNoGhost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   int // memory writes done before the crash
	}{
		{"nothing stored", 0},
		{"first memory stored", 1},
		{"all but the last stored", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, smallConfig(10, 5))
			e.srv.Handle(OpExtract, versionedExtractor(t))
			e.srv.Handle(OpDedup, storeAllJudge(t))
			e.record("s1", e.baseDay, "remember: The user is a pilot.", "remember: The user has two cats.", "remember: The user likes jazz.")

			e.crashAt(e.deps, tc.ok, func(r *Runner) error {
				_, _, err := r.ExtractNext(e.ctx, e.scope, "s1")
				return err
			})
			if n := len(e.markers()); n != 1 {
				t.Fatalf("%d markers after the crash, want the window's one", n)
			}
			if n := len(e.replayed()); n != 3 {
				t.Fatalf("the log replays %d memories before the redo, want the crashed window's 3", n)
			}
			if n := len(e.live()); n != tc.ok {
				t.Fatalf("%d memories stored before the crash, want %d", n, tc.ok)
			}

			// The restarted process redoes the window; the LLM answers
			// differently this time.
			r := NewRunner(e.deps, e.cfg)
			if err := r.ExtractPending(e.ctx, e.scope, "s1", nil); err != nil {
				t.Fatal(err)
			}
			if n := e.pending("s1"); n != 0 {
				t.Errorf("%d messages pending after the redo", n)
			}
			if m := e.markers(); len(m) != 0 {
				t.Errorf("markers left after the redo: %v", m)
			}
			var got []string
			for _, m := range e.replayed() {
				got = append(got, m.Content)
			}
			sort.Strings(got)
			want := []string{"Reworded: The user has two cats.", "Reworded: The user likes jazz.", "The user is a pilot."}
			if tc.ok >= 2 {
				// The first attempt's second memory was stored: it stays.
				want = append(want, "The user has two cats.")
				sort.Strings(want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("replayed contents (-want +got):\n%s", diff)
			}
			e.checkReplayIsLive()

			// Running again changes nothing, in the log or the store.
			lines := shardLines(t, e.dir)
			live := e.live()
			if err := NewRunner(e.deps, e.cfg).ExtractPending(e.ctx, e.scope, "s1", nil); err != nil {
				t.Fatal(err)
			}
			if err := r.recoverInflight(e.ctx, map[string]bool{sessionKey(e.scope, "s1"): true}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(lines, shardLines(t, e.dir)); diff != "" {
				t.Errorf("log changed by a second run (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(sortByID(live), sortByID(e.live()), memoryView); diff != "" {
				t.Errorf("store changed by a second run (-before +after):\n%s", diff)
			}
			e.checkReplayIsLive()
		})
	}
}

// A heuristic batch of several sessions that dies part-way leaves one
// marker; redoing the sessions with an LLM that gives other memories
// withdraws the batch's unstored memories, session by session.
func TestCrashedHeuristicBatchRedoneWithLLMLeavesNoGhost(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.MaxMessagesPerExtraction = 4
	cfg.EnableDedup = false
	e := newTestEnv(t, cfg, withoutLLM())
	sessions := recordSessions(e)
	heuristic := e.deps
	e.crashAt(heuristic, 3, func(r *Runner) error {
		var first error
		err := r.ExtractSessions(e.ctx, e.scope, sessions, nil, func(_ string, err error) {
			if first == nil {
				first = err
			}
		})
		return errors.Join(err, first)
	})
	if m := e.markers(); len(m) != 1 || !strings.HasPrefix(m[0], batchMarkerPrefix+"-") {
		t.Fatalf("markers after the crash = %v, want the batch's one", m)
	}
	stored := len(e.live())
	if n := len(e.replayed()); n <= stored {
		t.Fatalf("the log replays %d memories, the store holds %d: the crash left no ghost to test", n, stored)
	}

	// Redone with an LLM: one memory per user message, unlike the
	// heuristic extractor's.
	e.srv.Handle(OpExtract, func(r llmtest.Request) llmtest.Reply {
		p := parsePrompt(t, r.User)
		s := scene{Name: "Chat", IDs: p.newIDs()}
		for _, m := range p.New {
			if m.Role == string(imprint.RoleUser) {
				s.Memories = append(s.Memories, mem{Content: "The user said: " + m.Content, Type: "episodic", Priority: 60, Sources: []string{m.ID}})
			}
		}
		return scenesReply(s)
	})
	withLLM := e.deps
	withLLM.LLM = llmtest.NewClient(t, e.srv, llmtest.FormatOpenAI)
	r := NewRunner(withLLM, cfg)
	// One session first: the batch marker keeps the others' entries.
	if err := r.ExtractPending(e.ctx, e.scope, sessions[0], nil); err != nil {
		t.Fatal(err)
	}
	if err := r.ExtractSessions(e.ctx, e.scope, sessions, nil, func(sid string, err error) { t.Errorf("session %s: %v", sid, err) }); err != nil {
		t.Fatal(err)
	}
	for _, sid := range sessions {
		if n := e.pending(sid); n != 0 {
			t.Errorf("session %s has %d pending messages after the redo", sid, n)
		}
	}
	if m := e.markers(); len(m) != 0 {
		t.Errorf("markers left after the redo: %v", m)
	}
	if len(e.live()) <= stored {
		t.Fatalf("the redo stored nothing")
	}
	e.checkReplayIsLive()
}

// A run that completes, or whose store write fails in-process (the run
// withdraws what it logged), leaves no marker behind.
func TestCompletedWindowsLeaveNoMarker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		llm       bool
		failPutAt int32
	}{
		{"llm windows", true, 0},
		{"heuristic batch", false, 0},
		{"llm window whose second write fails", true, 2},
		{"heuristic batch whose third write fails", false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.MaxMessagesPerExtraction = 4
			var opts []envOpt
			if !tc.llm {
				opts = append(opts, withoutLLM())
			}
			e := newTestEnv(t, cfg, opts...)
			e.srv.Handle(OpExtract, rememberExtractor(t, "Facts"))
			e.srv.Handle(OpDedup, storeAllJudge(t))
			e.record("s1", e.baseDay, "remember: The user is a pilot.", "remember: The user has two cats.", "remember: The user likes jazz.",
				"I live in Lisbon with my partner.", "I work as a nurse in Porto.")
			sessions := append([]string{"s1"}, recordSessions(e)...)
			fs := &faultyStore{Store: e.store, failPutAt: tc.failPutAt}
			e.deps.Store = fs
			r := NewRunner(e.deps, cfg)
			failures := 0
			if err := r.ExtractSessions(e.ctx, e.scope, sessions, nil, func(string, error) { failures++ }); err != nil {
				t.Fatal(err)
			}
			if want := min(int(tc.failPutAt), 1); failures != want {
				t.Errorf("%d sessions stopped, want %d", failures, want)
			}
			if fs.puts.Load() == 0 {
				t.Fatal("no memory was written")
			}
			if m := e.markers(); len(m) != 0 {
				t.Errorf("markers left: %v", m)
			}
			e.checkReplayIsLive()
		})
	}
}

// A marker cut short by a crash while it was written (so before any of
// its window's lines) is removed without withdrawing anything.
func TestIncompleteMarkerIsRemoved(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, smallConfig(10, 5))
	e.srv.Handle(OpExtract, rememberExtractor(t, "Facts"))
	dir := filepath.Join(e.dir, shard.JournalDirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, sessionKey(e.scope, "s1")+"-X.json"), []byte(`{"at":"2026-05-0`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.record("s1", e.baseDay, "remember: The user is a pilot.")
	res, _, err := e.runner.ExtractNext(e.ctx, e.scope, "s1")
	if err != nil || !res.Success || res.StoredCount != 1 {
		t.Fatalf("window = %+v, %v", res, err)
	}
	if m := e.markers(); len(m) != 0 {
		t.Errorf("markers left: %v", m)
	}
	for _, l := range shardLines(t, e.dir) {
		if strings.HasPrefix(l, OpLineWithdraw) {
			t.Errorf("line %q logged, want no withdraw", l)
		}
	}
	e.checkReplayIsLive()
}

// A batch marker is recovered session by session: the entries of the
// sessions not being extracted stay in a marker of their own.
func TestBatchMarkerIsRecoveredPerSession(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, smallConfig(10, 5))
	kept := e.putMemory("The user is a pilot.", imprint.MemoryPersona)
	at := imprint.At(e.baseDay)
	mk, err := e.runner.beginInflight(batchMarkerPrefix, at, []inflightEntry{
		{Scope: e.scope, SessionID: "s1", IDs: []string{kept.ID, "ghost-1"}},
		{Scope: e.scope, SessionID: "s2", IDs: []string{"ghost-2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Live in this process: never recovered.
	key := func(sid string) map[string]bool { return map[string]bool{sessionKey(e.scope, sid): true} }
	if err := e.runner.recoverInflight(e.ctx, key("s1")); err != nil {
		t.Fatal(err)
	}
	if l := shardLines(t, e.dir); len(l) != 0 {
		t.Fatalf("a live marker was recovered: %v", l)
	}
	e.runner.endInflight(mk, false) // as a process that died would leave it

	for _, step := range []struct {
		sid     string
		lines   []string
		markers int
	}{
		{"s1", []string{"withdraw ghost-1"}, 1},
		{"s2", []string{"withdraw ghost-1", "withdraw ghost-2"}, 0},
		{"s2", []string{"withdraw ghost-1", "withdraw ghost-2"}, 0},
	} {
		if err := e.runner.recoverInflight(e.ctx, key(step.sid)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(step.lines, shardLines(t, e.dir)); diff != "" {
			t.Errorf("after recovering %s, lines (-want +got):\n%s", step.sid, diff)
		}
		if n := len(e.markers()); n != step.markers {
			t.Errorf("after recovering %s, %d markers, want %d", step.sid, n, step.markers)
		}
	}
}
