package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// The cases of the optional capabilities (imprint's capability.go). Each
// runs only when the store says it supports the capability; otherwise it
// is skipped with a line saying so, the way River's driver suite asks a
// driver what it supports.

// optionalTests are the optional capabilities' cases: supported asks the
// store, fn runs on it.
var optionalTests = []struct {
	name      string
	supported func(s imprint.Store) bool
	fn        func(t *testing.T, s imprint.Store)
}{
	{"BatchAppend", func(s imprint.Store) bool { _, ok := imprint.AsBatchAppender(s); return ok }, testBatchAppend},
	{"ConcurrentBatchAppends", func(s imprint.Store) bool {
		_, ok := imprint.AsConcurrentWriter(s)
		_, batched := imprint.AsBatchAppender(s)
		return ok && batched
	}, testConcurrentBatchAppends},
	{"SaveCaptures", func(s imprint.Store) bool { _, ok := imprint.AsCaptureSaver(s); return ok }, testSaveCaptures},
	{"PutMemories", func(s imprint.Store) bool { _, ok := imprint.AsMemoryBatchWriter(s); return ok }, testPutMemories},
	{"LiveMemoryHashes", func(s imprint.Store) bool { _, ok := imprint.AsLiveHashLister(s); return ok }, testLiveMemoryHashes},
	{"GetEpisodes", func(s imprint.Store) bool { _, ok := imprint.AsEpisodeBatchReader(s); return ok }, testGetEpisodes},
	{"AdvanceCursors", func(s imprint.Store) bool { _, ok := imprint.AsCursorBatchAdvancer(s); return ok }, testAdvanceCursors},
	{"PendingBatch", func(s imprint.Store) bool { _, ok := imprint.AsPendingBatchReader(s); return ok }, testPendingBatch},
	{"CountTermMatches", func(s imprint.Store) bool { _, ok := imprint.AsTermCounter(s); return ok }, testCountTermMatches},
	{"Browse", func(s imprint.Store) bool { _, ok := imprint.AsBrowser(s); return ok }, testBrowse},
	{"Dump", func(s imprint.Store) bool { _, ok := imprint.AsDumper(s); return ok }, testDump},
	{"Load", func(s imprint.Store) bool { _, ok := imprint.AsLoader(s); return ok }, testLoad},
	{"VectorSearchDescription", func(s imprint.Store) bool { _, ok := imprint.AsVectorSearchDescriber(s); return ok }, testVectorSearchDescription},
}

// runOptional runs the cases of the optional capabilities the stores of
// open support and skips the others.
func runOptional(t *testing.T, open func(t *testing.T) imprint.Store) {
	t.Helper()
	for _, tc := range optionalTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			if !tc.supported(s) {
				t.Skipf("store does not support %s", tc.name)
			}
			tc.fn(t, s)
		})
	}
}

// testConcurrentBatchAppends appends batches of distinct sessions, new ones and
// ones recorded before, from several goroutines at once, as a recorder's
// lanes do: every call succeeds (no deadlock, no serialization failure),
// each message is stored once, in its session's order.
func testConcurrentBatchAppends(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	ba, _ := imprint.AsBatchAppender(s)
	const lanes, rounds, per = 4, 3, 20
	session := func(lane, k int) string { return fmt.Sprintf("lane%d-s%d", lane, k) }
	// Each lane's second session has a message stored already.
	for l := range lanes {
		appendMsgs(t, s, scopeA, session(l, 1), msg("m0", imprint.RoleUser, "before", 0))
	}
	var wg sync.WaitGroup
	errs := make([]error, lanes)
	for l := range lanes {
		wg.Go(func() {
			for r := range rounds {
				var batches []imprint.MessageBatch
				for k := range 2 {
					var ms []imprint.Message
					for i := range per {
						n := r*per + i + 1
						ms = append(ms, msg(fmt.Sprintf("m%d", n), imprint.RoleUser, fmt.Sprintf("lane %d session %d message %d", l, k, n), n))
					}
					batches = append(batches, imprint.MessageBatch{Scope: scopeA, SessionID: session(l, k), Messages: ms})
				}
				res, err := ba.AppendMessageBatches(ctx, batches)
				if err == nil && (len(res) != 2 || len(res[0].Inserted) != per || len(res[1].Inserted) != per) {
					err = fmt.Errorf("round %d: results %+v, want %d inserted in each of 2", r, res, per)
				}
				if err != nil {
					errs[l] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for l, err := range errs {
		if err != nil {
			t.Errorf("lane %d: %v", l, err)
		}
	}
	for l := range lanes {
		for k := range 2 {
			got, err := s.PendingMessages(ctx, scopeA, session(l, k), 0)
			must(t, err)
			var ids []string
			for _, m := range got {
				ids = append(ids, m.ID)
			}
			var want []string
			if k == 1 {
				want = append(want, "m0")
			}
			for n := 1; n <= rounds*per; n++ {
				want = append(want, fmt.Sprintf("m%d", n))
			}
			if d := diff(want, ids); d != "" {
				t.Errorf("messages of %s (-want +got):\n%s", session(l, k), d)
			}
		}
	}
}

func testBatchAppend(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	ba, _ := imprint.AsBatchAppender(s)
	appendMsgs(t, s, scopeA, "s1", msg("m1", imprint.RoleUser, "first", 0))
	res, err := ba.AppendMessageBatches(ctx, []imprint.MessageBatch{
		{Scope: scopeA, SessionID: "s1", Messages: []imprint.Message{msg("m1", imprint.RoleUser, "first", 0), msg("m2", imprint.RoleUser, "second", 1)}},
		{Scope: scopeB, SessionID: "s1", Messages: []imprint.Message{msg("m1", imprint.RoleUser, "other scope", 0)}, MarkDueAt: 1},
		{Scope: scopeA, SessionID: "s1", Messages: []imprint.Message{msg("m2", imprint.RoleUser, "second", 1), msg("m3", imprint.RoleAssistant, "third", 2)}, MarkDueAt: 2},
	})
	must(t, err)
	if len(res) != 3 {
		t.Fatalf("%d results for 3 batches", len(res))
	}
	got := [][2][]string{}
	for _, r := range res {
		got = append(got, [2][]string{r.Inserted, r.Duplicates})
	}
	want := [][2][]string{{{"m2"}, {"m1"}}, {{"m1"}, nil}, {{"m3"}, {"m2"}}}
	if d := diff(want, got); d != "" {
		t.Errorf("inserted and duplicates per batch (-want +got):\n%s", d)
	}
	// The second batch of scope A saw 2 user rounds: due at 2.
	if !res[2].Session.ExtractionDue || res[2].Session.RoundsSinceExtraction != 2 || !res[1].Session.ExtractionDue {
		t.Errorf("sessions after the batches: %+v / %+v, want both due", res[1].Session, res[2].Session)
	}
	sess, err := s.GetSession(ctx, scopeA, "s1")
	must(t, err)
	if !sess.ExtractionDue {
		t.Error("the due flag of MarkDueAt was not stored")
	}
	// Batches of distinct sessions, some new, one with an id stored before
	// and one repeated inside the batch.
	res, err = ba.AppendMessageBatches(ctx, []imprint.MessageBatch{
		{Scope: scopeA, SessionID: "s3", Messages: []imprint.Message{msg("n1", imprint.RoleUser, "new session", 0), msg("n1", imprint.RoleUser, "new session", 0), msg("n2", imprint.RoleAssistant, "answer", 1)}},
		{Scope: scopeA, SessionID: "s1", Messages: []imprint.Message{msg("m3", imprint.RoleAssistant, "third", 2), msg("m4", imprint.RoleUser, "fourth", 3)}, MarkDueAt: 1},
		{Scope: scopeB, SessionID: "s4", Messages: []imprint.Message{msg("o1", imprint.RoleUser, "other", 0), msg("o2", imprint.RoleUser, "other again", 1)}},
	})
	must(t, err)
	got = got[:0]
	for _, r := range res {
		got = append(got, [2][]string{r.Inserted, r.Duplicates})
	}
	want = [][2][]string{{{"n1", "n2"}, {"n1"}}, {{"m4"}, {"m3"}}, {{"o1", "o2"}, nil}}
	if d := diff(want, got); d != "" {
		t.Errorf("inserted and duplicates per batch of distinct sessions (-want +got):\n%s", d)
	}
	for i, wantRounds := range []int{1, 3, 2} {
		if s := res[i].Session; s.ID != []string{"s3", "s1", "s4"}[i] || s.RoundsSinceExtraction != wantRounds {
			t.Errorf("batch %d: session %s with %d rounds, want %d", i, s.ID, s.RoundsSinceExtraction, wantRounds)
		}
	}
	if !res[1].Session.ExtractionDue {
		t.Error("s1 not due after MarkDueAt 1")
	}
	ms, err := s.PendingMessages(ctx, scopeA, "s3", 10)
	must(t, err)
	if len(ms) != 2 || ms[0].ID != "n1" || ms[1].ID != "n2" || ms[1].Seq <= ms[0].Seq {
		t.Errorf("messages of s3: %+v, want n1 then n2", ms)
	}
	// An invalid batch stores nothing, not even the valid ones before it.
	_, err = ba.AppendMessageBatches(ctx, []imprint.MessageBatch{
		{Scope: scopeA, SessionID: "s2", Messages: []imprint.Message{msg("x1", imprint.RoleUser, "fine", 0)}},
		{Scope: scopeA, SessionID: "s2", Messages: []imprint.Message{msg("", imprint.RoleUser, "no id", 1)}},
	})
	wantErr(t, "a batch with a message without id", err, imprint.ErrInvalid)
	_, err = s.GetMessage(ctx, scopeA, "s2", "x1")
	wantErr(t, "message of a refused batch call", err, imprint.ErrNotFound)
}

func testSaveCaptures(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	cs, _ := imprint.AsCaptureSaver(s)
	e1, e2 := episode("ep-1", scopeA), episode("ep-2", scopeA)
	wantErr(t, "SaveCaptures with more episodes than trace lists",
		cs.SaveCaptures(ctx, []imprint.Episode{e1, e2}, [][]imprint.Trace{steps(1, "a")}), imprint.ErrInvalid)
	must(t, cs.SaveCaptures(ctx, []imprint.Episode{e1, e2}, [][]imprint.Trace{steps(2, "a"), steps(1, "b")}))
	// Saving again is idempotent, as SaveCapture is.
	must(t, cs.SaveCaptures(ctx, []imprint.Episode{e1, e2}, [][]imprint.Trace{steps(2, "a"), steps(1, "b")}))
	for id, want := range map[string][]string{"ep-1": {"a-step-0", "a-step-1"}, "ep-2": {"b-step-0"}} {
		got, err := s.GetEpisode(ctx, scopeA, id)
		must(t, err)
		if d := diff(want, got.TraceIDs); d != "" {
			t.Errorf("trace ids of %s (-want +got):\n%s", id, d)
		}
		trs, err := s.ListTraces(ctx, scopeA, imprint.TraceFilter{EpisodeID: id})
		must(t, err)
		if d := diff(want, traceIDs(trs)); d != "" {
			t.Errorf("traces of %s (-want +got):\n%s", id, d)
		}
	}
	// One conflict (ep-1 is scope A's) saves nothing of the call.
	e3, clash := episode("ep-3", scopeB), episode("ep-1", scopeB)
	err := cs.SaveCaptures(ctx, []imprint.Episode{e3, clash}, [][]imprint.Trace{steps(1, "c"), steps(1, "d")})
	wantErr(t, "SaveCaptures with an episode of another scope", err, imprint.ErrConflict)
	_, err = s.GetEpisode(ctx, scopeB, "ep-3")
	wantErr(t, "episode of a refused SaveCaptures", err, imprint.ErrNotFound)
}

func testPutMemories(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	bw, _ := imprint.AsMemoryBatchWriter(s)
	must(t, bw.PutMemories(ctx, nil))
	a1 := memory("a1", "User flies to Lisbon in May", 0)
	putAll(t, s, a1)
	// In one call: a new memory, one superseding a memory stored before,
	// and one superseding a memory written earlier in the same call.
	b1, b2, b3 := memory("b1", "User likes window seats", 1), memory("b2", "User flies to Porto in May", 2), memory("b3", "User likes aisle seats", 3)
	must(t, bw.PutMemories(ctx, []imprint.MemoryPut{{Memory: b1}, {Memory: b2, Supersede: []string{"a1"}}, {Memory: b3, Supersede: []string{"b1"}}}))
	live := func() []string {
		ms, err := s.ListMemories(ctx, scopeA, imprint.MemoryFilter{})
		must(t, err)
		ids := memIDs(ms)
		slices.Sort(ids)
		return ids
	}
	if d := diff([]string{"b2", "b3"}, live()); d != "" {
		t.Errorf("live memories after PutMemories (-want +got):\n%s", d)
	}
	for id, by := range map[string]string{"a1": "b2", "b1": "b3"} {
		m, err := s.GetMemory(ctx, scopeA, id)
		must(t, err)
		if m.SupersededBy == nil || *m.SupersededBy != by {
			t.Errorf("%s superseded by %v, want %s", id, m.SupersededBy, by)
		}
	}
	if got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMemory, Text: "seats"}); !slices.Equal(got, []string{"b3"}) {
		t.Errorf("keyword search for seats: %v, want only the live b3", got)
	}
	// A new memory and the rewrite of a stored id of the same scope.
	c1, b2v2 := memory("c1", "User packs light", 4), memory("b2", "User flies to Faro in June", 5)
	must(t, bw.PutMemories(ctx, []imprint.MemoryPut{{Memory: c1}, {Memory: b2v2}}))
	got, err := s.GetMemory(ctx, scopeA, "b2")
	must(t, err)
	if got.Content != b2v2.Content || got.SupersededBy != nil {
		t.Errorf("b2 after its rewrite in a batch: %q superseded by %v", got.Content, got.SupersededBy)
	}
	if d := diff([]string{"b2", "b3", "c1"}, live()); d != "" {
		t.Errorf("live memories after the rewrite (-want +got):\n%s", d)
	}
	// One conflict (a1 is superseded already), an id of another scope or
	// an invalid memory: the call writes nothing.
	other := memory("c1", "another scope's c1", 6)
	other.Scope = scopeB
	for _, tc := range []struct {
		what string
		puts []imprint.MemoryPut
		kind error
	}{
		{"a target superseded already", []imprint.MemoryPut{{Memory: memory("d1", "User reads", 7)}, {Memory: memory("d2", "User writes", 8), Supersede: []string{"a1"}}}, imprint.ErrConflict},
		{"an id of another scope", []imprint.MemoryPut{{Memory: memory("d1", "User reads", 7)}, {Memory: other}}, imprint.ErrConflict},
		{"a memory without content", []imprint.MemoryPut{{Memory: memory("d1", "User reads", 7)}, {Memory: memory("d2", "", 8)}}, imprint.ErrInvalid},
	} {
		wantErr(t, "PutMemories with "+tc.what, bw.PutMemories(ctx, tc.puts), tc.kind)
		_, err := s.GetMemory(ctx, scopeA, "d1")
		wantErr(t, "memory of a refused PutMemories ("+tc.what+")", err, imprint.ErrNotFound)
	}
	if d := diff([]string{"b2", "b3", "c1"}, live()); d != "" {
		t.Errorf("live memories after refused calls (-want +got):\n%s", d)
	}
}

func testLiveMemoryHashes(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	hl, _ := imprint.AsLiveHashLister(s)
	a1, a2, a3, a4 := memory("a1", "one", 0), memory("a2", "two", 1), memory("a3", "three", 2), memory("a4", "one again", 3)
	a4.ContentHash, a4.Workspace = a1.ContentHash, "proj-x"
	a5 := memory("a5", "one more", 4)
	a5.ContentHash, a5.Workspace = a1.ContentHash, "proj-x"
	b1 := memory("b1", "other scope", 0)
	b1.Scope, b1.ContentHash = scopeB, "hash-b-only"
	putAll(t, s, a1, a2, a3, a5, b1)
	// a2 superseded by a4 (a1's hash), a3 forgotten: neither is live.
	must(t, s.PutMemory(ctx, a4, []string{"a2"}))
	gone := at(4)
	a3.ForgottenAt = &gone
	must(t, s.PutMemory(ctx, a3, nil))
	got, err := hl.LiveMemoryHashes(ctx, scopeA, []string{a1.ContentHash, a2.ContentHash, a3.ContentHash, "hash-b-only", "hash-none"})
	must(t, err)
	for _, wss := range got {
		slices.Sort(wss)
	}
	// a1 has no workspace, a4 and a5 share proj-x: each workspace once.
	if d := diff(map[string][]string{a1.ContentHash: {"", "proj-x"}}, got); d != "" {
		t.Errorf("live hashes of scope A and their workspaces (-want +got):\n%s", d)
	}
	for _, h := range []string{a1.ContentHash, a2.ContentHash, a3.ContentHash, "hash-b-only"} {
		one, err := s.HasLiveMemoryHash(ctx, scopeA, h)
		must(t, err)
		if _, listed := got[h]; one != listed {
			t.Errorf("HasLiveMemoryHash(%s) = %v, LiveMemoryHashes disagrees", h, one)
		}
		same, err := s.FindMemoryByHash(ctx, scopeA, h)
		must(t, err)
		var wss []string
		for _, m := range same {
			if !slices.Contains(wss, m.Workspace) {
				wss = append(wss, m.Workspace)
			}
		}
		slices.Sort(wss)
		if d := diff(wss, got[h]); d != "" {
			t.Errorf("workspaces of hash %s: FindMemoryByHash and LiveMemoryHashes disagree (-find +list):\n%s", h, d)
		}
	}
	if got, err := hl.LiveMemoryHashes(ctx, scopeA, nil); err != nil || len(got) != 0 {
		t.Errorf("no hashes: %v, %v", got, err)
	}
	_, err = hl.LiveMemoryHashes(ctx, imprint.Scope{}, []string{a1.ContentHash})
	wantErr(t, "LiveMemoryHashes without a scope", err, imprint.ErrInvalid)
}

func testAdvanceCursors(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	ca, _ := imprint.AsCursorBatchAdvancer(s)
	var msgs []imprint.Message
	for i := range 6 {
		msgs = append(msgs, msg(fmt.Sprintf("m%d", i), imprint.RoleUser, fmt.Sprintf("Message %d about the Lisbon trip", i), i))
	}
	// Each batch session has a twin moved by AdvanceCursor one move at a
	// time: both must end the same.
	seqs := map[string][]int64{}
	for _, sid := range []string{"c1", "c2", "c3", "d1", "d2", "d3"} {
		appendMsgs(t, s, scopeA, sid, msgs...)
		pend, err := s.PendingMessages(ctx, scopeA, sid, 0)
		must(t, err)
		for _, m := range pend {
			seqs[sid] = append(seqs[sid], m.Seq)
		}
		must(t, s.MarkExtractionDue(ctx, scopeA, sid, true))
	}
	appendMsgs(t, s, scopeB, "b1", msgs...)
	appendMsgs(t, s, scopeB, "c2", msgs...) // c2 of another scope never moves
	t1, t2 := at(40).Time, at(50).Time
	moves := func(p string) []imprint.CursorMove {
		return []imprint.CursorMove{
			{SessionID: p + "1", ToSeq: seqs[p+"1"][3], LastScene: "flights", At: t1},
			{SessionID: p + "2", ToSeq: seqs[p+"2"][5], LastScene: "hotels", At: t1},
			// c1 again: backwards, so its cursor stays, its scene and time change.
			{SessionID: p + "1", ToSeq: seqs[p+"1"][1], LastScene: "food", At: t2},
		}
	}
	must(t, ca.AdvanceCursors(ctx, scopeA, moves("c")))
	for _, m := range moves("d") {
		must(t, s.AdvanceCursor(ctx, scopeA, m.SessionID, m.ToSeq, m.LastScene, m.At))
	}
	state := func(sid string) string {
		t.Helper()
		x, err := s.GetSession(ctx, scopeA, sid)
		must(t, err)
		pending, err := s.CountPending(ctx, scopeA, sid)
		must(t, err)
		return fmt.Sprintf("cursor #%d pending %d scene %q rounds %d due %v extracted %s", slices.Index(seqs[sid], x.Cursor),
			pending, x.LastSceneName, x.RoundsSinceExtraction, x.ExtractionDue, x.LastExtractedAt)
	}
	for _, n := range []string{"1", "2", "3"} {
		if got, want := state("c"+n), state("d"+n); got != want {
			t.Errorf("session c%s after AdvanceCursors: %s; one AdvanceCursor at a time: %s", n, got, want)
		}
	}
	if got := state("c1"); !strings.HasPrefix(got, "cursor #3 ") || !strings.Contains(got, `scene "food"`) {
		t.Errorf("c1 after a move back: %s, want cursor #3 and the later scene", got)
	}
	if b, err := s.GetSession(ctx, scopeB, "c2"); err != nil || b.Cursor != 0 {
		t.Errorf("c2 of another scope after AdvanceCursors: cursor %d, %v", b.Cursor, err)
	}
	// A zero time leaves no extraction time, as AdvanceCursor.
	must(t, ca.AdvanceCursors(ctx, scopeA, []imprint.CursorMove{{SessionID: "c3", ToSeq: seqs["c3"][0]}, {SessionID: "d3", ToSeq: seqs["d3"][0]}}))
	if x, err := s.GetSession(ctx, scopeA, "c3"); err != nil || !x.LastExtractedAt.IsZero() || x.Cursor != seqs["c3"][0] {
		t.Errorf("c3 after a move without a time: cursor %d, extracted %s, %v", x.Cursor, x.LastExtractedAt, err)
	}
	// A refused batch moves nothing; a missing session is named.
	before := []string{state("c2"), state("c3")}
	err := ca.AdvanceCursors(ctx, scopeA, []imprint.CursorMove{{SessionID: "c3", ToSeq: seqs["c3"][5]}, {SessionID: "zz-none", ToSeq: 1}, {SessionID: "b1", ToSeq: 1}})
	wantErr(t, "AdvanceCursors with missing sessions", err, imprint.ErrNotFound)
	if err != nil && !strings.Contains(err.Error(), `"zz-none"`) {
		t.Errorf("AdvanceCursors error %q does not name the first missing session, zz-none", err)
	}
	for _, tc := range []struct {
		what  string
		scope imprint.Scope
		moves []imprint.CursorMove
		kind  error
	}{
		{"another scope's session", scopeA, []imprint.CursorMove{{SessionID: "c3", ToSeq: seqs["c3"][4]}, {SessionID: "b1", ToSeq: 1}}, imprint.ErrNotFound},
		{"an unknown session", scopeA, []imprint.CursorMove{{SessionID: "c3", ToSeq: seqs["c3"][4]}, {SessionID: "none", ToSeq: 1}}, imprint.ErrNotFound},
		{"a move without a session", scopeA, []imprint.CursorMove{{SessionID: "c3", ToSeq: seqs["c3"][4]}, {ToSeq: 1}}, imprint.ErrInvalid},
		{"an incomplete scope", imprint.Scope{Tenant: scopeA.Tenant}, []imprint.CursorMove{{SessionID: "c3", ToSeq: seqs["c3"][4]}}, imprint.ErrInvalid},
	} {
		wantErr(t, "AdvanceCursors with "+tc.what, ca.AdvanceCursors(ctx, tc.scope, tc.moves), tc.kind)
	}
	if after := []string{state("c2"), state("c3")}; !slices.Equal(before, after) {
		t.Errorf("sessions after refused AdvanceCursors: %v, want %v", after, before)
	}
	must(t, ca.AdvanceCursors(ctx, scopeA, nil))
}

func testGetEpisodes(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	br, _ := imprint.AsEpisodeBatchReader(s)
	a1, a2, b1 := episode("ep-a1", scopeA), episode("ep-a2", scopeA), episode("ep-b1", scopeB)
	a2.Turns = a2.Turns[:1]
	must(t, s.SaveEpisode(ctx, a1))
	must(t, s.SaveEpisode(ctx, a2))
	must(t, s.SaveEpisode(ctx, b1))
	ids := []string{"ep-a1", "ep-a2", "ep-b1", "ep-none", "ep-a1"}
	// An open episode's live turns are in its rows: they are read too.
	if ss, ok := s.(imprint.ServiceStore); ok {
		_, err := ss.AppendTurns(ctx, scopeA, "s-live", []imprint.Turn{
			turn("u1", imprint.RoleUser, "Book a flight to Lisbon", 0),
			turn("a1", imprint.RoleAssistant, "Which date?", 1),
		}, "ep-live")
		must(t, err)
		ids = append(ids, "ep-live")
	}
	got, err := br.GetEpisodes(ctx, scopeA, ids)
	must(t, err)
	// Each is what GetEpisode returns; another scope's and unknown ids are
	// left out, a repeated id comes once.
	var want []imprint.Episode
	for _, id := range ids {
		e, err := s.GetEpisode(ctx, scopeA, id)
		if errors.Is(err, imprint.ErrNotFound) || slices.ContainsFunc(want, func(w imprint.Episode) bool { return w.ID == id }) {
			continue
		}
		must(t, err)
		want = append(want, e)
	}
	byID := func(a, b imprint.Episode) int { return strings.Compare(a.ID, b.ID) }
	slices.SortFunc(want, byID)
	slices.SortFunc(got, byID)
	if d := diff(want, got); d != "" {
		t.Errorf("GetEpisodes (-GetEpisode one by one +GetEpisodes):\n%s", d)
	}
	if n := len(want); n < 2 || len(want[0].Turns) == len(want[1].Turns) {
		t.Errorf("the case needs episodes of different turn counts, got %d episodes", n)
	}
	if got, err := br.GetEpisodes(ctx, scopeA, nil); err != nil || len(got) != 0 {
		t.Errorf("no ids: %v, %v", got, err)
	}
	_, err = br.GetEpisodes(ctx, imprint.Scope{}, []string{"ep-a1"})
	wantErr(t, "GetEpisodes without a scope", err, imprint.ErrInvalid)
}

func testPendingBatch(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	pr, _ := imprint.AsPendingBatchReader(s)
	// s-new: never extracted; s-half: its cursor past its first three
	// messages; s-done: nothing pending; s-b: another scope's.
	var msgs []imprint.Message
	for i := range 7 {
		role := imprint.RoleUser
		if i%2 == 1 {
			role = imprint.RoleAssistant
		}
		msgs = append(msgs, msg("m"+string(rune('0'+i)), role, "Message number "+string(rune('0'+i))+" about the Lisbon trip", i))
	}
	for _, sid := range []string{"s-new", "s-half", "s-done"} {
		_, err := s.AppendMessages(ctx, scopeA, sid, msgs)
		must(t, err)
	}
	_, err := s.AppendMessages(ctx, scopeB, "s-b", msgs)
	must(t, err)
	half, err := s.PendingMessages(ctx, scopeA, "s-half", 0)
	must(t, err)
	must(t, s.AdvanceCursor(ctx, scopeA, "s-half", half[2].Seq, "trip", time.Now()))
	done, err := s.PendingMessages(ctx, scopeA, "s-done", 0)
	must(t, err)
	must(t, s.AdvanceCursor(ctx, scopeA, "s-done", done[len(done)-1].Seq, "", time.Now()))

	ids := []string{"s-half", "s-new", "s-done", "s-b", "s-none", "s-new"}
	for _, limit := range []int{0, 2, 100} {
		got, err := pr.PendingBatch(ctx, scopeA, ids, limit)
		must(t, err)
		if len(got) != len(ids) {
			t.Fatalf("limit %d: %d results for %d ids", limit, len(got), len(ids))
		}
		// Each is what GetSession and PendingMessages return for the id.
		for i, id := range ids {
			var want imprint.SessionPending
			sess, err := s.GetSession(ctx, scopeA, id)
			switch {
			case err == nil:
				want.Session, want.Found = sess, true
			case !errors.Is(err, imprint.ErrNotFound):
				t.Fatal(err)
			}
			want.Pending, err = s.PendingMessages(ctx, scopeA, id, limit)
			must(t, err)
			if d := diff(want, got[i]); d != "" {
				t.Errorf("limit %d, %s (-GetSession and PendingMessages +PendingBatch):\n%s", limit, id, d)
			}
		}
		if n := len(got[1].Pending); limit == 2 && n != 2 || limit != 2 && n != len(msgs) {
			t.Errorf("limit %d: s-new has %d pending", limit, n)
		}
	}
	// A repeated id's messages are its own.
	got, err := pr.PendingBatch(ctx, scopeA, []string{"s-new", "s-new"}, 0)
	must(t, err)
	got[0].Pending[0].Content = "changed"
	if got[1].Pending[0].Content == "changed" {
		t.Error("a repeated id shares its messages with the first")
	}
	if got, err := pr.PendingBatch(ctx, scopeA, nil, 0); err != nil || len(got) != 0 {
		t.Errorf("no ids: %v, %v", got, err)
	}
	_, err = pr.PendingBatch(ctx, imprint.Scope{}, []string{"s-new"}, 0)
	wantErr(t, "PendingBatch without a scope", err, imprint.ErrInvalid)
}

func testCountTermMatches(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	tc, _ := imprint.AsTermCounter(s)
	a1, a2, a3 := memory("a1", "User booked a flight to Lisbon", 0), memory("a2", "User books flights often", 1), memory("a3", "用户喜欢北京烤鸭", 2)
	b1, b2 := memory("b1", "flight delayed", 0), memory("b2", "another flight to Lisbon", 1)
	b1.Scope, b2.Scope = scopeB, scopeB
	// Stemmed (books, flights), in scope A only; a CJK bigram; nothing
	// searchable counts 0. The same whether A is alone in the store or not.
	putAll(t, s, a1, a2, a3)
	for _, alone := range []bool{true, false} {
		if !alone {
			putAll(t, s, b1, b2)
		}
		got, err := tc.CountTermMatches(ctx, scopeA, imprint.KindMemory, []string{"flight", "lisbon", "北京", "porto", `"`}, 10)
		must(t, err)
		if d := diff([]int{2, 1, 1, 0, 0}, got); d != "" {
			t.Errorf("counts of scope A (alone %v) (-want +got):\n%s", alone, d)
		}
	}
	gotB, err := tc.CountTermMatches(ctx, scopeB, imprint.KindMemory, []string{"flight", "lisbon", "北京"}, 10)
	must(t, err)
	if d := diff([]int{2, 1, 0}, gotB); d != "" {
		t.Errorf("counts of scope B (-want +got):\n%s", d)
	}
	none, err := tc.CountTermMatches(ctx, scopeC, imprint.KindMemory, []string{"flight"}, 10)
	must(t, err)
	if d := diff([]int{0}, none); d != "" {
		t.Errorf("counts of a scope with no memories (-want +got):\n%s", d)
	}
	capped, err := tc.CountTermMatches(ctx, scopeA, imprint.KindMemory, []string{"flight"}, 1)
	must(t, err)
	if d := diff([]int{1}, capped); d != "" {
		t.Errorf("count capped at 1 (-want +got):\n%s", d)
	}
	_, err = tc.CountTermMatches(ctx, scopeA, "thing", []string{"x"}, 10)
	wantErr(t, "CountTermMatches of an unknown kind", err, imprint.ErrInvalid)
	_, err = tc.CountTermMatches(ctx, imprint.Scope{Tenant: "acme"}, imprint.KindMemory, []string{"x"}, 10)
	wantErr(t, "CountTermMatches without a full scope", err, imprint.ErrInvalid)
}

// RunJobEngineHost runs the cases of imprint.JobEngineHost[TTx] against
// stores made by open (fresh, empty, migrated; the suite closes them),
// with a recording job engine, when they support it, and skips them
// otherwise. Run calls it; TTx is the stores' transaction type.
func RunJobEngineHost[TTx any](t *testing.T, open func(t *testing.T) imprint.ServiceStore) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s imprint.ServiceStore, h imprint.JobEngineHost[TTx], e *recordingEngine[TTx])
	}{
		{"JobEngineTakesEnqueues", testJobEngineTakesEnqueues[TTx]},
		{"JobEngineFailureRollsBack", testJobEngineFailureRollsBack[TTx]},
		{"JobEngineHandOver", testJobEngineHandOver[TTx]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			h, ok := imprint.AsJobEngineHost[TTx](s)
			if !ok {
				t.Skip("store does not support a job engine of this transaction type")
			}
			tc.fn(t, s, h, &recordingEngine[TTx]{})
		})
	}
}

// recordingEngine is a job engine that keeps the jobs it is given in
// memory (whatever becomes of the store's transaction) and fails every
// insert while fail is set.
type recordingEngine[TTx any] struct {
	mu   sync.Mutex
	jobs []imprint.Job
	fail error
}

func (e *recordingEngine[TTx]) InsertTx(_ context.Context, _ TTx, j imprint.Job) (imprint.Job, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fail != nil {
		return j, false, e.fail
	}
	for _, old := range e.jobs {
		if j.UniqueKey != "" && old.UniqueKey == j.UniqueKey {
			return old, false, nil
		}
	}
	j.ID, j.State = int64(len(e.jobs)+1), imprint.JobAvailable
	e.jobs = append(e.jobs, j)
	return j, true, nil
}

func (e *recordingEngine[TTx]) JobStats(_ context.Context, scope *imprint.Scope) (imprint.JobStats, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var st imprint.JobStats
	for _, j := range e.jobs {
		if scope == nil || j.Scope == *scope {
			st.Available++
		}
	}
	return st, nil
}

func (e *recordingEngine[TTx]) ListJobs(_ context.Context, scope *imprint.Scope, state imprint.JobState, limit int) ([]imprint.Job, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []imprint.Job{}
	for i := len(e.jobs) - 1; i >= 0 && len(out) < max(limit, 1); i-- {
		if j := e.jobs[i]; j.State == state && (scope == nil || j.Scope == *scope) {
			out = append(out, j)
		}
	}
	return out, nil
}

func (e *recordingEngine[TTx]) kinds() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return ids(e.jobs, func(j imprint.Job) string { return string(j.Kind) + " " + j.SessionID + " " + j.EpisodeID })
}

// testJobEngineTakesEnqueues checks that, with an engine installed,
// EnqueueJob, CloseEpisode and SubmitEpisode hand their jobs to it (scope
// and ids filled in, unique keys kept), the jobs table takes none, and
// JobStats and ListJobs answer from the engine.
func testJobEngineTakesEnqueues[TTx any](t *testing.T, s imprint.ServiceStore, h imprint.JobEngineHost[TTx], e *recordingEngine[TTx]) {
	ctx := ctxFor(t)
	wantErr(t, "SetJobEngine(nil)", h.SetJobEngine(nil), imprint.ErrInvalid)
	must(t, h.SetJobEngine(e))
	first := enqueue(t, s, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", UniqueKey: imprint.ExtractJobKey(scopeA, "s1")})
	again, inserted, err := s.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", UniqueKey: imprint.ExtractJobKey(scopeA, "s1")})
	must(t, err)
	if inserted || again.ID != first.ID {
		t.Errorf("second enqueue of the key: inserted %v job %d, want the engine's job %d", inserted, again.ID, first.ID)
	}
	_, _, err = s.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobExtract, SessionID: "s1"})
	wantErr(t, "EnqueueJob without scope (validated before the engine)", err, imprint.ErrInvalid)
	_, err = s.AppendTurns(ctx, scopeA, "s2", []imprint.Turn{turn("t1", imprint.RoleUser, "hi", 0)}, "ep-live")
	must(t, err)
	_, err = s.CloseEpisode(ctx, scopeA, "ep-live", imprint.ClosedFinalized, &imprint.Job{Kind: imprint.JobCapture})
	must(t, err)
	must(t, s.SubmitEpisode(ctx, episode("ep-sub", scopeB), imprint.Job{Kind: imprint.JobCapture}))
	if d := diff([]string{"extract s1 ", "capture s2 ep-live", "capture s1 ep-sub"}, e.kinds()); d != "" {
		t.Errorf("jobs the engine got (-want +got):\n%s", d)
	}
	if got := claim(t, s, imprint.At(time.Now().Add(time.Hour)), 10); len(got) != 0 {
		t.Errorf("the jobs table took jobs with an engine installed: %v", jobIDs(got))
	}
	st, err := s.JobStats(ctx, &scopeA)
	must(t, err)
	if st != (imprint.JobStats{Available: 2}) {
		t.Errorf("JobStats of scope A = %+v, want the engine's 2 available", st)
	}
	listed := listJobs(t, s, &scopeB, imprint.JobAvailable)
	if len(listed) != 1 || listed[0].EpisodeID != "ep-sub" {
		t.Errorf("ListJobs of scope B = %+v, want the engine's capture of ep-sub", listed)
	}
}

// testJobEngineFailureRollsBack checks that a failed engine insert fails
// the store call and writes nothing of it: the episode stays open, the
// submitted episode is not saved.
func testJobEngineFailureRollsBack[TTx any](t *testing.T, s imprint.ServiceStore, h imprint.JobEngineHost[TTx], e *recordingEngine[TTx]) {
	ctx := ctxFor(t)
	must(t, h.SetJobEngine(e))
	_, err := s.AppendTurns(ctx, scopeA, "s1", []imprint.Turn{turn("t1", imprint.RoleUser, "hi", 0)}, "ep-live")
	must(t, err)
	boom := errors.New("engine down")
	e.fail = boom
	if _, err := s.CloseEpisode(ctx, scopeA, "ep-live", imprint.ClosedFinalized, &imprint.Job{Kind: imprint.JobCapture}); err == nil {
		t.Error("CloseEpisode succeeded although the engine refused its job")
	}
	if _, err := s.OpenEpisode(ctx, scopeA, "s1"); err != nil {
		t.Errorf("the episode was closed although its job was refused: %v", err)
	}
	if err := s.SubmitEpisode(ctx, episode("ep-sub", scopeA), imprint.Job{Kind: imprint.JobCapture}); err == nil {
		t.Error("SubmitEpisode succeeded although the engine refused its job")
	}
	_, err = s.GetEpisode(ctx, scopeA, "ep-sub")
	wantErr(t, "episode of a refused SubmitEpisode", err, imprint.ErrNotFound)
}

// testJobEngineHandOver checks that the unfinished jobs of the jobs table
// move to the engine once, attempts reset, and finished ones stay.
func testJobEngineHandOver[TTx any](t *testing.T, s imprint.ServiceStore, h imprint.JobEngineHost[TTx], e *recordingEngine[TTx]) {
	ctx := ctxFor(t)
	n, err := h.HandOverTableJobs(ctx)
	must(t, err)
	if n != 0 {
		t.Errorf("HandOverTableJobs without an engine moved %d jobs", n)
	}
	enqueue(t, s, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", RunAt: at(0)})
	done := enqueue(t, s, imprint.Job{Kind: imprint.JobEmbed, Scope: scopeB, RunAt: at(0)})
	enqueue(t, s, imprint.Job{Kind: imprint.JobCapture, Scope: scopeB, SessionID: "s1", EpisodeID: "ep-1", RunAt: at(5)})
	claimed := claim(t, s, at(1), 10)
	if len(claimed) != 2 {
		t.Fatalf("claimed %d jobs, want 2", len(claimed))
	}
	must(t, s.CompleteJob(ctx, done.ID))
	must(t, h.SetJobEngine(e))
	n, err = h.HandOverTableJobs(ctx)
	must(t, err)
	if n != 2 {
		t.Errorf("HandOverTableJobs moved %d jobs, want the 2 unfinished", n)
	}
	if d := diff([]string{"extract s1 ", "capture s1 ep-1"}, e.kinds()); d != "" {
		t.Errorf("jobs the engine got (-want +got):\n%s", d)
	}
	for _, j := range e.jobs {
		if j.Attempts != 0 || j.LastError != "" {
			t.Errorf("handed-over job %+v keeps its attempts", j)
		}
	}
	n, err = h.HandOverTableJobs(ctx)
	must(t, err)
	if n != 0 {
		t.Errorf("a second hand-over moved %d jobs", n)
	}
}

// testVectorSearchDescription: a store that says how it searches vectors
// says it on one line (imprint doctor appends it to the store check).
func testVectorSearchDescription(t *testing.T, s imprint.Store) {
	v, _ := imprint.AsVectorSearchDescriber(s)
	d := v.VectorSearch()
	if strings.TrimSpace(d) == "" || strings.ContainsAny(d, "\n\r") {
		t.Errorf("VectorSearch() = %q, want one non-empty line", d)
	}
}
