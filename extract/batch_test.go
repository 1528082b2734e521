package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/shard"
)

// facts are user messages the heuristic extractor makes memories of,
// mixed with chatter the quality gate rejects.
var facts = []string{
	"I prefer dark mode in every editor.", "ok", "My name is Alice.", "assistant: Noted, Alice.",
	"I work as a nurse in Boston.", "I'm allergic to peanuts.", "thanks", "I have two kids.",
	"Always use tabs, not spaces.", "I really hate waking up early.", "My wife is a nurse.",
	"Lately I've been learning Rust.", "Please never use emojis in commit messages.",
	"I don't like cilantro.", "Oh, I live in Berlin with my partner.", "My dream is to open a bakery.",
}

// recordSessions records the same conversations into e: three sessions,
// one spanning several windows and one repeating another's facts (so the
// exact-text dedup skips across sessions).
func recordSessions(e *testEnv) []string {
	long := append(append([]string{}, facts...), facts[:9]...)
	e.record("s-long", e.baseDay, long...)
	e.record("s-short", e.baseDay.Add(time.Hour), "I'm a software engineer at Stripe.", "ok", "From now on, answer in Chinese.")
	e.record("s-repeat", e.baseDay.Add(2*time.Hour), facts[2], facts[4], "I need to change my return flight to Newark tomorrow.")
	return []string{"s-long", "s-short", "s-repeat"}
}

// windowOutcome is what a user sees of one window's result.
type windowOutcome struct {
	Session   string
	Messages  []string
	Decisions Decisions
	Records   []string
	Scenes    []string
	Success   bool
}

func outcome(r Result) windowOutcome {
	return windowOutcome{r.SessionID, r.MessageIDs, r.Decisions, recordIDs(r.Records), r.SceneNames, r.Success}
}

// shardLines returns the op and memory id of each records line.
func shardLines(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	if err := shard.Read(dir, func(line []byte) error {
		var l RecordLine
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		out = append(out, l.Op+" "+l.Memory.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// memoryView is a memory without what differs between two runs (the time
// it was written) or is not logged (the vector).
var memoryView = cmpopts.IgnoreFields(imprint.Memory{}, "CreatedAt", "UpdatedAt", "Vec")

func TestExtractSessionsMatchesOneSessionAfterAnother(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.MaxMessagesPerExtraction = 4
	cfg.MaxBackgroundMessages = 3
	one := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
	many := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
	sessions := recordSessions(one)
	recordSessions(many)

	var want, got []windowOutcome
	for _, sid := range sessions {
		if err := one.runner.ExtractPending(one.ctx, one.scope, sid, func(r Result) { want = append(want, outcome(r)) }); err != nil {
			t.Fatal(err)
		}
	}
	err := many.runner.ExtractSessions(many.ctx, many.scope, sessions, func(r Result) { got = append(got, outcome(r)) },
		func(sid string, err error) { t.Errorf("session %s stopped: %v", sid, err) })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("window results (-one by one +together):\n%s", diff)
	}
	if len(want) < 6 {
		t.Fatalf("only %d windows; the test needs several windows per session", len(want))
	}
	skips := 0
	for _, w := range want {
		skips += w.Decisions.Skip
	}
	if skips == 0 {
		t.Errorf("no memory was skipped as a duplicate; the test needs the dedup across sessions")
	}
	wm, gm := one.live(), many.live()
	if diff := cmp.Diff(wm, gm, memoryView); diff != "" {
		t.Errorf("memories (-one by one +together):\n%s", diff)
	}
	for _, sid := range sessions {
		a, _ := one.db.GetSession(one.ctx, one.scope, sid)
		b, _ := many.db.GetSession(many.ctx, many.scope, sid)
		if a.LastSceneName != b.LastSceneName || one.pending(sid) != 0 || many.pending(sid) != 0 {
			t.Errorf("session %s: scene %q vs %q, pending %d vs %d", sid, a.LastSceneName, b.LastSceneName, one.pending(sid), many.pending(sid))
		}
	}
	if diff := cmp.Diff(shardLines(t, one.dir), shardLines(t, many.dir)); diff != "" {
		t.Errorf("records lines (-one by one +together):\n%s", diff)
	}
}

// crashingStore fails every PutMemory after the first ok ones, as if the
// process died between the window's records-shard sync and the rest of
// its store transactions; with once, only the one after them fails (a
// transient failure: the run goes on).
type crashingStore struct {
	imprint.Store
	ok   int
	once bool
	done bool
}

var errCrash = errors.New("simulated crash")

func (s *crashingStore) PutMemory(ctx context.Context, m imprint.Memory, supersede []string) error {
	if s.ok <= 0 && !s.done {
		s.done = s.once
		return errCrash
	}
	s.ok--
	return s.Store.PutMemory(ctx, m, supersede)
}

// recordLongSession records a session of many windows, each with memories
// of its own.
func recordLongSession(e *testEnv) string {
	var msgs []string
	for i := range 40 {
		msgs = append(msgs, fmt.Sprintf("I live in Town%d with my partner.", i), fmt.Sprintf("I work as a nurse in City%d.", i))
	}
	e.record("s-many", e.baseDay.Add(-time.Hour), msgs...)
	return "s-many"
}

func TestWindowLoggedBeforeStoreReplaysAfterRedo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		together bool
		ok       int
		once     bool
	}{
		{"window by window, nothing stored", false, 0, false},
		{"window by window, half stored", false, 1, false},
		{"sessions together, nothing stored", true, 0, false},
		{"sessions together, part stored", true, 5, false},
		{"sessions together, one write failed early", true, 3, true},
		{"sessions together, one write failed late", true, 30, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.MaxMessagesPerExtraction = 4
			e := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
			sessions := append([]string{recordLongSession(e)}, recordSessions(e)...)
			run := func(r *Runner) error {
				if tc.together {
					var first error
					err := r.ExtractSessions(e.ctx, e.scope, sessions, nil, func(_ string, err error) {
						if first == nil {
							first = err
						}
					})
					return errors.Join(err, first)
				}
				for _, sid := range sessions {
					if err := r.ExtractPending(e.ctx, e.scope, sid, nil); err != nil {
						return err
					}
				}
				return nil
			}
			crashing := e.deps
			crashing.Store = &crashingStore{Store: e.db, ok: tc.ok, once: tc.once}
			if err := run(NewRunner(crashing, cfg)); !errors.Is(err, errCrash) {
				t.Fatalf("first run = %v, want the simulated crash", err)
			}
			logged := len(shardLines(t, e.dir))
			if logged <= tc.ok {
				t.Fatalf("%d lines logged before the crash; want the window's lines before its transactions", logged)
			}
			// The failed window and those after it in its session stay
			// pending.
			if n := e.pending(sessions[0]); tc.ok < 30 && n == 0 {
				t.Errorf("nothing pending in %s after a failed write", sessions[0])
			}
			// The restarted run redoes what is pending.
			if err := run(NewRunner(e.deps, cfg)); err != nil {
				t.Fatal(err)
			}
			for _, sid := range sessions {
				if n := e.pending(sid); n != 0 {
					t.Errorf("session %s has %d pending messages after the redo", sid, n)
				}
			}
			live := e.live()
			if len(live) < 5 {
				t.Fatalf("only %d memories", len(live))
			}
			seen := map[string]bool{}
			for _, m := range live {
				if seen[m.Content] {
					t.Errorf("memory %q stored twice", m.Content)
				}
				seen[m.Content] = true
			}
			// Replaying the log gives exactly the live set, with the ids.
			fresh := openDB(t)
			if _, err := ReplayWith(e.ctx, fresh, shard.Dir(e.dir), embedding.NewHash()); err != nil {
				t.Fatal(err)
			}
			got, err := fresh.ListMemories(e.ctx, e.scope, imprint.MemoryFilter{})
			if err != nil {
				t.Fatal(err)
			}
			byID := func(ms []imprint.Memory) []imprint.Memory {
				sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
				return ms
			}
			if diff := cmp.Diff(byID(live), byID(got), memoryView, cmpopts.IgnoreFields(imprint.Memory{}, "Embedder")); diff != "" {
				t.Errorf("replayed memories (-live +replayed):\n%s", diff)
			}
		})
	}
}

func TestReplayKeepsTheLastLineOfAMemoryAndDropsWithdrawn(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "records")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	scope := imprint.Scope{Tenant: "acme", User: "ada", Agent: "helper"}
	at := imprint.At(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	mem := func(id, content string, supersedes ...string) imprint.Memory {
		return imprint.Memory{ID: id, Content: content, Type: imprint.MemoryPersona, Priority: 70, Scope: scope, SessionID: "s",
			SourceMessageIDs: []string{"m1"}, Timestamps: []imprint.Time{}, Supersedes: append([]string{}, supersedes...), Version: 1,
			CreatedAt: at, UpdatedAt: at, Extractor: imprint.ExtractorLLM}
	}
	old := mem("a", "User lives in Berlin.")
	stale := mem("b", "User lives in Paris.", "a")
	stale.Version = 2
	// The update was planned against a, then a was superseded by c
	// meanwhile: b was planned again and logged against c.
	c := mem("c", "User lives in Lyon.", "a")
	c.Version = 2
	final := mem("b", "User lives in Paris now.", "c")
	final.Version = 3
	// A memory whose store write failed after it was logged is withdrawn.
	failed := mem("d", "User has a cat.")
	var lines []string
	for _, l := range []RecordLine{
		{Op: OpLineStore, At: at, Memory: old},
		{Op: OpLineUpdate, At: at, Memory: stale},
		{Op: OpLineUpdate, At: at, Memory: c},
		{Op: OpLineUpdate, At: at, Memory: final},
		{Op: OpLineStore, At: at, Memory: failed},
		{Op: OpLineWithdraw, At: at, Memory: failed},
	} {
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	body := ""
	for _, l := range lines {
		body += l + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, shard.FileName(at.Time)), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	st, err := ReplayWith(ctx, db, shard.Dir(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 6 || st.Written != 3 {
		t.Errorf("replay stats %+v, want 6 lines and 3 memories written", st)
	}
	live, err := db.ListMemories(ctx, scope, imprint.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range live {
		got = append(got, fmt.Sprintf("%s %s v%d", m.ID, m.Content, m.Version))
	}
	if diff := cmp.Diff([]string{"b User lives in Paris now. v3"}, got); diff != "" {
		t.Errorf("live memories after replay (-want +got):\n%s", diff)
	}
}

// A session whose memory write fails in a batch does not make a later
// session of the same batch skip the same fact as a duplicate: the
// failed session's memory is not stored, so the later session's is, as
// when the sessions run one after the other, and the log replays to the
// live set.
//
// The same when the batch's memories, written together first (a store
// with imprint.MemoryBatchWriter), fail together: they are then written
// one by one.
func TestFailedSessionInBatchDoesNotSuppressLaterDuplicate(t *testing.T) {
	t.Parallel()
	for _, batched := range []bool{false, true} {
		t.Run(fmt.Sprintf("batched=%v", batched), func(t *testing.T) {
			t.Parallel()
			testFailedSessionInBatch(t, batched)
		})
	}
}

func testFailedSessionInBatch(t *testing.T, batched bool) {
	e := newTestEnv(t, DefaultConfig(), withoutLLM(), withEmbedder())
	fs := &faultyStore{Store: e.store, failPutAt: 1}
	e.deps.Store = fs
	if batched {
		bs := &batchFaultyStore{faultyStore: fs}
		e.deps.Store = bs
		defer func() {
			if n := bs.batches.Load(); n == 0 {
				t.Error("the memories were never written together")
			}
		}()
	}
	e.runner = NewRunner(e.deps, e.cfg)
	e.record("s1", e.baseDay, "My name is Alice.")
	e.record("s2", e.baseDay.Add(time.Hour), "I have two kids.", "My name is Alice.")
	scope := e.scope.WithDefaults()

	// Both sessions planned into one batch (ExtractSessions batches what
	// is planned by the time it commits).
	var plan []*plannedWindow
	for _, sid := range []string{"s1", "s2"} {
		ws, more, err := e.runner.planSession(e.ctx, scope, sid)
		if err != nil || more || len(ws) != 1 || len(ws[0].mems) == 0 {
			t.Fatalf("plan %s = %d windows, more %v, %v; want one window with memories", sid, len(ws), more, err)
		}
		plan = append(plan, ws...)
	}
	var want []string
	for _, m := range plan[1].mems {
		want = append(want, m.Content)
	}
	slices.Sort(want)
	if !slices.Contains(want, plan[0].mems[0].Content) {
		t.Fatalf("s2's memories %q do not repeat s1's %q", want, plan[0].mems[0].Content)
	}

	results := map[string]Result{}
	stopped := map[string]error{}
	e.runner.runPlanned(e.ctx, scope, plan, map[string]bool{}, func(r Result) { results[r.SessionID] = r },
		func(sid string, err error) error { stopped[sid] = err; return nil })

	if !errors.Is(stopped["s1"], imprint.ErrUnavailable) || len(stopped) != 1 {
		t.Fatalf("stopped sessions = %v, want s1 with the write failure", stopped)
	}
	if n := e.pending("s1"); n != 1 {
		t.Errorf("%d messages pending in s1, want its failed window's 1", n)
	}
	if n := e.pending("s2"); n != 0 {
		t.Errorf("%d messages pending in s2", n)
	}
	if r := results["s2"]; !r.Success || r.Decisions != (Decisions{Store: len(want)}) {
		t.Errorf("s2 result: success %v, decisions %+v; want every memory stored", r.Success, r.Decisions)
	}
	if diff := cmp.Diff(want, e.liveContents()); diff != "" {
		t.Errorf("live memories after the batch (-want +got):\n%s", diff)
	}
	e.checkReplayIsLive()
	if m := e.markers(); len(m) != 0 {
		t.Errorf("markers left: %v", m)
	}

	// Redone, s1's fact is a duplicate of the one s2 stored.
	if err := e.runner.ExtractPending(e.ctx, e.scope, "s1", nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, e.liveContents()); diff != "" {
		t.Errorf("live memories after s1 is redone (-want +got):\n%s", diff)
	}
	e.checkReplayIsLive()
}

// hashListingStore lists live hashes in one call (imprint.LiveHashLister,
// answered by the real store hash by hash) and counts the calls of both
// and of the reads of memories by hash.
type hashListingStore struct {
	imprint.Store
	lists, singles, finds atomic.Int32
}

func (s *hashListingStore) SupportsLiveHashes() bool { return true }

func (s *hashListingStore) LiveMemoryHashes(ctx context.Context, scope imprint.Scope, hashes []string) (map[string][]string, error) {
	s.lists.Add(1)
	out := map[string][]string{}
	for _, h := range hashes {
		same, err := s.Store.FindMemoryByHash(ctx, scope, h)
		if err != nil {
			return nil, err
		}
		for _, m := range same {
			if !slices.Contains(out[h], m.Workspace) {
				out[h] = append(out[h], m.Workspace)
			}
		}
	}
	return out, nil
}

func (s *hashListingStore) HasLiveMemoryHash(ctx context.Context, scope imprint.Scope, hash string) (bool, error) {
	s.singles.Add(1)
	return s.Store.HasLiveMemoryHash(ctx, scope, hash)
}

func (s *hashListingStore) FindMemoryByHash(ctx context.Context, scope imprint.Scope, hash string) ([]imprint.Memory, error) {
	s.finds.Add(1)
	return s.Store.FindMemoryByHash(ctx, scope, hash)
}

// With a store that lists live hashes, the batch planner asks once for
// all the windows of a commit batch, and never hash by hash (the listing
// names the workspaces of the stored ones): a fact stored before is still
// skipped, the new ones stored.
func TestBatchAsksLiveHashesOnce(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, DefaultConfig(), withoutLLM(), withEmbedder())
	e.record("s1", e.baseDay, "My name is Alice.")
	if err := e.runner.ExtractSessions(e.ctx, e.scope, []string{"s1"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	before := e.liveContents()
	if len(before) != 1 {
		t.Fatalf("live memories after s1: %q, want one", before)
	}
	hs := &hashListingStore{Store: e.store}
	e.deps.Store = hs
	e.runner = NewRunner(e.deps, e.cfg)
	e.record("s2", e.baseDay.Add(time.Hour), "I have two kids.", "My name is Alice.")
	e.record("s3", e.baseDay.Add(2*time.Hour), "I work as a nurse in Lisbon.")
	var dec Decisions
	if err := e.runner.ExtractSessions(e.ctx, e.scope, []string{"s2", "s3"}, func(r Result) {
		dec.Store += r.Decisions.Store
		dec.Skip += r.Decisions.Skip
	}, nil); err != nil {
		t.Fatal(err)
	}
	// One listing per commit batch: s2 and s3 are committed together when
	// s3 is planned by the time s2's batch is gathered, else one after the
	// other (the gathering does not wait), so one or two listings; a
	// lookup per memory would be three or more single lookups.
	if l := hs.lists.Load(); l < 1 || l > 2 || hs.singles.Load() != 0 || hs.finds.Load() != 0 {
		t.Errorf("%d listings, %d single lookups and %d reads by hash, want 1 or 2 (one per batch) and none",
			l, hs.singles.Load(), hs.finds.Load())
	}
	after := e.liveContents()
	if dec.Skip != 1 || dec.Store != len(after)-len(before) || dec.Store < 2 {
		t.Errorf("decisions %+v with live memories %q, want the stored fact skipped and the others stored", dec, after)
	}

	// A fact stored in another workspace is no duplicate; in the same
	// workspace it is, and the listing tells which without a lookup.
	inWorkspace := func(session, ws string) Decisions {
		t.Helper()
		msg := imprint.Message{ID: session + "-1", Role: imprint.RoleUser, Content: "I work as a pilot in Porto.",
			Workspace: ws, Timestamp: imprint.At(e.baseDay.Add(3 * time.Hour))}
		if _, err := e.db.AppendMessages(e.ctx, e.scope, session, []imprint.Message{msg}); err != nil {
			t.Fatal(err)
		}
		var d Decisions
		if err := e.runner.ExtractSessions(e.ctx, e.scope, []string{session}, func(r Result) {
			d.Store += r.Decisions.Store
			d.Skip += r.Decisions.Skip
		}, nil); err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := inWorkspace("s4", "/w/a"); d != (Decisions{Store: 1}) {
		t.Fatalf("the fact in /w/a: %+v, want it stored", d)
	}
	if d := inWorkspace("s5", "/w/b"); d != (Decisions{Store: 1}) {
		t.Errorf("the same fact in /w/b: %+v, want it stored (the one of /w/a is another workspace's)", d)
	}
	if d := inWorkspace("s6", "/w/a"); d != (Decisions{Skip: 1}) {
		t.Errorf("the same fact in /w/a again: %+v, want it skipped", d)
	}
	if hs.singles.Load() != 0 || hs.finds.Load() != 0 {
		t.Errorf("%d single lookups and %d reads by hash, want none", hs.singles.Load(), hs.finds.Load())
	}
}

// The batch planner gives a window the background messages the one-window
// path does (NextWindow): none before the first window of a session never
// extracted, which it so reads nothing more for, and the messages before
// the cursor once the session was extracted.
func TestPlannedBackgroundMatchesNextWindow(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.MaxMessagesPerExtraction = 4
	e := newTestEnv(t, cfg, withoutLLM())
	const sid = "s-bg"
	check := func(when string, wantBackground bool) {
		t.Helper()
		ws, _, err := e.runner.planSession(e.ctx, e.scope, sid)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) == 0 {
			t.Fatalf("%s: no window planned", when)
		}
		want, err := NextWindow(e.ctx, e.db, e.scope, sid, cfg.MaxMessagesPerExtraction, cfg.MaxBackgroundMessages)
		if err != nil {
			t.Fatal(err)
		}
		got := ws[0].w
		if d := cmp.Diff(ids(want.Background), ids(got.Background)); d != "" {
			t.Errorf("%s: background of the first window (-NextWindow +planned):\n%s", when, d)
		}
		if (len(got.Background) > 0) != wantBackground {
			t.Errorf("%s: %d background messages", when, len(got.Background))
		}
	}
	e.record(sid, e.baseDay, "I live in Lisbon with my partner.", "assistant: Noted.", "I work as a nurse.", "assistant: Good.",
		"I drink tea every morning.", "assistant: Nice.")
	check("never extracted", false)
	if err := e.runner.ExtractSessions(e.ctx, e.scope, []string{sid}, nil, nil); err != nil {
		t.Fatal(err)
	}
	e.record(sid, e.baseDay.Add(time.Hour), "I moved to Porto last week.", "assistant: Congratulations.", "I ride a bike to work.")
	check("extracted before", true)
}

func ids(ms []imprint.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// overlapEmbedder is an embedder that holds each call until a second one
// is in flight, or a second has passed, and notes whether two overlapped.
type overlapEmbedder struct {
	imprint.Embedder
	mu       sync.Mutex
	inFlight int
	overlap  bool
}

func (o *overlapEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	o.mu.Lock()
	o.inFlight++
	o.overlap = o.overlap || o.inFlight > 1
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.inFlight--
		o.mu.Unlock()
	}()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		o.mu.Lock()
		done := o.overlap
		o.mu.Unlock()
		if done {
			break
		}
	}
	return o.Embedder.Embed(ctx, texts)
}

// The planner extracts different sessions at once (planWorkers), each
// session's windows in order, and the batch stores what it stores when
// the sessions are planned one after another.
func TestPlannerExtractsSessionsAtOnce(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	e := newTestEnv(t, cfg, withoutLLM(), withEmbedder())
	emb := &overlapEmbedder{Embedder: e.deps.Embedder}
	e.deps.Embedder = emb
	e.runner = NewRunner(e.deps, e.cfg)
	e.record("s1", e.baseDay, "My name is Alice.", "I work as a nurse in Lisbon.")
	e.record("s2", e.baseDay.Add(time.Hour), "I have two kids.", "I work as a pilot in Porto.")
	var stored int
	if err := e.runner.ExtractSessions(e.ctx, e.scope, []string{"s1", "s2"}, func(r Result) { stored += r.Decisions.Store }, nil); err != nil {
		t.Fatal(err)
	}
	if !emb.overlap {
		t.Error("the two sessions' windows were extracted one after the other")
	}
	if got := e.liveContents(); stored < 3 || len(got) != stored {
		t.Errorf("%d stored, live memories %q", stored, got)
	}
}
