package curate

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/shard"
)

// captureTauBench captures the first three τ-bench trajectories of the
// test data (no LLM) into the env's scope.
func (e *env) captureTauBench() {
	e.t.Helper()
	f, err := os.Open(testfiles.Path(e.t, "tau-bench/airline-40.json"))
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	trs, err := importer.ReadTauBench(f, "airline-40.json")
	if err != nil {
		e.t.Fatal(err)
	}
	r := capture.NewRunner(capture.Deps{Store: e.db, Embedder: embedding.NewHash()}, capture.DefaultConfig())
	for _, tr := range trs[:3] {
		for _, ep := range tr.Episodes {
			ep.Scope = e.scope
			if _, err := r.Run(e.t.Context(), ep, imprint.ClosedFinalized); err != nil {
				e.t.Fatal(err)
			}
		}
	}
}

// snapshot is what a user sees of a scope: every memory version, every
// message of every session, every trace, and the sessions' cursors as the
// message ids they stand on.
type snapshot struct {
	Memories []imprint.Memory
	Messages map[string][]imprint.Message
	Pending  map[string]int
	Traces   []imprint.Trace
	Episodes []imprint.Episode
}

func (e *env) snapshot() snapshot {
	e.t.Helper()
	ctx := e.t.Context()
	s := snapshot{Messages: map[string][]imprint.Message{}, Pending: map[string]int{}}
	s.Memories = get(e.db.ListMemories(ctx, e.scope, imprint.MemoryFilter{AllVersions: true, Limit: imprint.NoLimit}))(e.t)
	for _, ss := range get(e.db.ListSessions(ctx, e.scope))(e.t) {
		s.Messages[ss.ID] = get(e.db.MessagesBefore(ctx, e.scope, ss.ID, 1<<62, 100000))(e.t)
		s.Pending[ss.ID] = get(e.db.CountPending(ctx, e.scope, ss.ID))(e.t)
	}
	s.Traces = get(e.db.ListTraces(ctx, e.scope, imprint.TraceFilter{Limit: imprint.NoLimit}))(e.t)
	seen := map[string]bool{}
	for _, t := range s.Traces {
		if !seen[t.EpisodeID] {
			seen[t.EpisodeID] = true
			s.Episodes = append(s.Episodes, get(e.db.GetEpisode(ctx, e.scope, t.EpisodeID))(e.t))
		}
	}
	return s
}

// ignoreStoreLocal leaves out what a store assigns itself (insertion
// order) and the vectors (compared by their presence elsewhere).
var ignoreStoreLocal = cmp.Options{
	cmpopts.IgnoreFields(imprint.Message{}, "Seq", "Vec", "Embedder"),
	cmpopts.IgnoreFields(imprint.Memory{}, "Vec", "Embedder"),
	cmpopts.IgnoreFields(imprint.Trace{}, "VecSummary", "VecAction", "Embedder"),
	cmpopts.EquateEmpty(),
}

// TestExportRestoreRoundTrip: a scope of real data (a LoCoMo session with
// its heuristic memories, one edited, one forgotten; captured τ-bench
// trajectories) exported and restored into an empty data dir reads the
// same, with the same ids, and nothing is pending extraction again.
func TestExportRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	session := e.importLoCoMo()
	e.captureTauBench()
	ms := get(e.db.ListMemories(ctx, e.scope, imprint.MemoryFilter{SessionID: session, Limit: imprint.NoLimit}))(t)
	get(e.m.Edit(ctx, imprint.EditRequest{Scope: e.scope, ID: ms[0].ID, Content: "Caroline went to a support group (edited)"}))(t)
	get(e.m.Forget(ctx, e.scope, ms[1].ID))(t)
	get(e.m.Remember(ctx, imprint.RememberRequest{Scope: e.scope, Content: "Ada keeps bees"}))(t)
	want := e.snapshot()
	if len(want.Traces) == 0 || len(want.Memories) < 3 {
		t.Fatalf("test data gave %d traces and %d memories", len(want.Traces), len(want.Memories))
	}

	var buf bytes.Buffer
	st := get(Export(ctx, e.db, e.scope, ExportOptions{}, &buf))(t)
	if st.Memories != len(want.Memories) || st.Traces != len(want.Traces) {
		t.Errorf("export stats %+v, want %d memories and %d traces", st, len(want.Memories), len(want.Traces))
	}
	path := writeFile(t, buf.Bytes())
	if !IsExport(path) {
		t.Fatalf("IsExport of an export = false")
	}

	fresh := openEnv(t, t.TempDir())
	rst := get(Restore(ctx, RestoreDeps{Store: fresh.db, Embedder: embedding.NewHash(), Records: fresh.records, Conversations: fresh.conv}, bytes.NewReader(buf.Bytes())))(t)
	if rst != st {
		t.Errorf("restore stats %+v, want the export's %+v", rst, st)
	}
	got := fresh.snapshot()
	if d := cmp.Diff(want, got, ignoreStoreLocal); d != "" {
		t.Errorf("restored scope differs (-exported +restored):\n%s", d)
	}
	// Restored memories are found as before (they were embedded again).
	hits := get(fresh.db.SearchText(ctx, imprint.TextQuery{Scope: e.scope, Kind: imprint.KindMemory, Text: "bees"}))(t)
	if len(hits) != 1 {
		t.Errorf("search of a restored memory = %v", hits)
	}
	// The restore wrote the shards too: a rebuild of the restored dir from
	// them gives the same live memories.
	rebuilt := openEnv(t, t.TempDir())
	get(Rebuild(ctx, RebuildDeps{Store: rebuilt.db, Conversations: shard.Dir(fresh.conv.Dir()), Records: shard.Dir(fresh.records.Dir())}))(t)
	a := get(fresh.db.ListMemories(ctx, e.scope, imprint.MemoryFilter{Limit: imprint.NoLimit}))(t)
	b := get(rebuilt.db.ListMemories(ctx, e.scope, imprint.MemoryFilter{Limit: imprint.NoLimit}))(t)
	if d := cmp.Diff(a, b, ignoreStoreLocal, cmpopts.SortSlices(func(a, b imprint.Memory) bool { return a.ID < b.ID })); d != "" {
		t.Errorf("rebuild of the restored dir differs (-restored +rebuilt):\n%s", d)
	}
}

func TestExportKindsAndBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	e.importLoCoMo()
	var buf bytes.Buffer
	st := get(Export(ctx, e.db, e.scope, ExportOptions{Kinds: []imprint.Kind{imprint.KindMemory}}, &buf))(t)
	if st.Messages != 0 || st.Memories == 0 || strings.Contains(buf.String(), `"kind":"message"`) {
		t.Errorf("--kind memory exported %+v", st)
	}
	// --workspace narrows: a memory of another workspace is left out.
	get(e.m.Remember(ctx, imprint.RememberRequest{Scope: e.scope, Content: "Use pnpm in the shop repo", Workspace: "/src/shop"}))(t)
	get(e.m.Remember(ctx, imprint.RememberRequest{Scope: e.scope, Content: "Use cargo in the tool repo", Workspace: "/src/tool"}))(t)
	buf.Reset()
	st = get(Export(ctx, e.db, e.scope, ExportOptions{Kinds: []imprint.Kind{imprint.KindMemory}, Workspace: "/src/shop"}, &buf))(t)
	if st.Memories != 1 || !strings.Contains(buf.String(), "pnpm") {
		t.Errorf("export of workspace /src/shop = %+v, want its one memory", st)
	}
	fresh := openEnv(t, t.TempDir())
	for name, in := range map[string]string{
		"empty":        "",
		"no header":    `{"kind":"memory","memory":{}}`,
		"unknown kind": `{"kind":"header","format":"imprint-export","version":1}` + "\n" + `{"kind":"bogus"}`,
		"orphan trace": `{"kind":"header","format":"imprint-export","version":1}` + "\n" + `{"kind":"trace","trace":{"id":"t","episode_id":"e"}}`,
		"not json":     `{"kind":"header","format":"imprint-export","version":1}` + "\n" + `{"kind":`,
		"newer":        `{"kind":"header","format":"imprint-export","version":99}`,
	} {
		if _, err := Restore(ctx, RestoreDeps{Store: fresh.db}, strings.NewReader(in)); !isInvalid(err) {
			t.Errorf("%s: restore error %v, want kind invalid", name, err)
		}
	}
}

// TestRebuildFromShards: a data dir whose messages and memories were
// managed by hand (edited, forgotten, one purged with its sources) rebuilt
// from its shards into an empty store has the same live memories and
// messages; the purged ones stay gone and nothing is pending again.
func TestRebuildFromShards(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	session := e.importLoCoMo()
	ms := get(e.db.ListMemories(ctx, e.scope, imprint.MemoryFilter{SessionID: session, Limit: imprint.NoLimit}))(t)
	get(e.m.Edit(ctx, imprint.EditRequest{Scope: e.scope, ID: ms[0].ID, Content: "corrected text"}))(t)
	get(e.m.Forget(ctx, e.scope, ms[1].ID))(t)
	purged := get(e.m.Purge(ctx, e.scope, ms[2].ID, imprint.PurgeOptions{WithSources: true}))(t)
	want := e.snapshot()

	fresh := openEnv(t, t.TempDir())
	get(Rebuild(ctx, RebuildDeps{Store: fresh.db, Embedder: embedding.NewHash(),
		Conversations: shard.Dir(e.conv.Dir()), Records: shard.Dir(e.records.Dir())}))(t)
	got := fresh.snapshot()
	byID := cmpopts.SortSlices(func(a, b imprint.Memory) bool { return a.ID < b.ID })
	if d := cmp.Diff(want.Memories, got.Memories, ignoreStoreLocal, byID); d != "" {
		t.Errorf("rebuilt memories differ (-before +rebuilt):\n%s", d)
	}
	if d := cmp.Diff(want.Messages, got.Messages, ignoreStoreLocal); d != "" {
		t.Errorf("rebuilt messages differ (-before +rebuilt):\n%s", d)
	}
	for _, id := range purged.MemoryIDs {
		if _, err := fresh.db.GetMemory(ctx, e.scope, id); err == nil {
			t.Errorf("purged memory %s rebuilt", id)
		}
	}
	for _, id := range purged.MessageIDs {
		if _, err := fresh.db.GetMessage(ctx, e.scope, session, id); err == nil {
			t.Errorf("purged message %s rebuilt", id)
		}
	}
	if got.Pending[session] > want.Pending[session]+10 {
		t.Errorf("after the rebuild %d messages are pending (before: %d): extraction would redo the session", got.Pending[session], want.Pending[session])
	}
}

// FuzzRestore: no export, however broken, panics a restore.
func FuzzRestore(f *testing.F) {
	f.Add([]byte(`{"kind":"header","format":"imprint-export","version":1}` + "\n" +
		`{"kind":"session","session":{"session_id":"s","scope":{"tenant":"t","user":"u","agent":"a"}},"cursor_message_id":"m1"}` + "\n" +
		`{"kind":"message","message":{"id":"m1","session_id":"s","scope":{"tenant":"t","user":"u","agent":"a"},"role":"user","content":"hi","timestamp":1,"recorded_at":1}}` + "\n" +
		`{"kind":"memory","memory":{"id":"x","content":"c","type":"persona","scope":{"tenant":"t","user":"u","agent":"a"},"supersedes":["y"]}}` + "\n" +
		`{"kind":"episode","episode":{"id":"e","session_id":"s","scope":{"tenant":"t","user":"u","agent":"a"},"turns":[]}}` + "\n" +
		`{"kind":"trace","trace":{"id":"t1","episode_id":"e","scope":{"tenant":"t","user":"u","agent":"a"}}}`))
	f.Add([]byte(`{"kind":"header","format":"imprint-export"}` + "\n" + `{"kind":"memory","memory":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fresh := openEnv(t, t.TempDir())
		_, _ = Restore(t.Context(), RestoreDeps{Store: fresh.db}, bytes.NewReader(data))
	})
}
