package curate

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/sqlite"
)

// storeDump is everything a store holds, as its Dumper reads it.
type storeDump struct {
	Sessions []imprint.SessionState
	Messages []imprint.Message
	Memories []imprint.Memory
	Captures []imprint.Capture
	Keys     []imprint.KeyRecord
	Calls    []imprint.LLMCall
	Jobs     []imprint.Job
}

// dumpAll reads every record of st with its Dumper, and its jobs.
func dumpAll(t *testing.T, st imprint.ServiceStore) storeDump {
	t.Helper()
	ctx := t.Context()
	d, ok := imprint.AsDumper(st)
	if !ok {
		t.Fatalf("%T is no Dumper", st)
	}
	var out storeDump
	pages := func(read func(after string) (int, string, error)) {
		t.Helper()
		after := ""
		for {
			n, next, err := read(after)
			if err != nil {
				t.Fatal(err)
			}
			if n < 7 {
				return
			}
			after = next
		}
	}
	pages(func(a string) (int, string, error) {
		p, next, err := d.DumpSessions(ctx, a, 7)
		out.Sessions = append(out.Sessions, p...)
		return len(p), next, err
	})
	pages(func(a string) (int, string, error) {
		p, next, err := d.DumpMessages(ctx, a, 7)
		out.Messages = append(out.Messages, p...)
		return len(p), next, err
	})
	pages(func(a string) (int, string, error) {
		p, next, err := d.DumpMemories(ctx, a, 7)
		out.Memories = append(out.Memories, p...)
		return len(p), next, err
	})
	pages(func(a string) (int, string, error) {
		p, next, err := d.DumpCaptures(ctx, a, 7)
		out.Captures = append(out.Captures, p...)
		return len(p), next, err
	})
	pages(func(a string) (int, string, error) {
		p, next, err := d.DumpLLMCalls(ctx, a, 7)
		out.Calls = append(out.Calls, p...)
		return len(p), next, err
	})
	out.Keys = get(d.DumpAPIKeys(ctx))(t)
	for _, s := range []imprint.JobState{imprint.JobAvailable, imprint.JobRetryable} {
		out.Jobs = append(out.Jobs, get(st.ListJobs(ctx, nil, s, 1000))(t)...)
	}
	return out
}

// sameCopy compares two stores' dumps, leaving out what each store numbers
// itself (message sequence numbers, cursors as numbers, job ids).
var sameCopy = cmp.Options{
	cmpopts.IgnoreFields(imprint.Message{}, "Seq"),
	cmpopts.IgnoreFields(imprint.Session{}, "Cursor"),
	cmpopts.IgnoreFields(imprint.Job{}, "ID"),
	cmpopts.EquateEmpty(),
}

// fillForMigrate gives e's store one of everything a migration copies: a
// LoCoMo session with its memories (one edited, one forgotten, one added
// by hand), captured τ-bench episodes with vectors, an open episode, a
// session with no message, an unfinished job and two API keys, one
// revoked.
func fillForMigrate(t *testing.T, e *env) {
	t.Helper()
	ctx := t.Context()
	session := e.importLoCoMo()
	e.captureTauBench()
	ms := get(e.db.ListMemories(ctx, e.scope, imprint.MemoryFilter{SessionID: session, Limit: imprint.NoLimit}))(t)
	get(e.m.Edit(ctx, imprint.EditRequest{Scope: e.scope, ID: ms[0].ID, Content: "Caroline went to a support group (edited)"}))(t)
	get(e.m.Forget(ctx, e.scope, ms[1].ID))(t)
	get(e.m.Remember(ctx, imprint.RememberRequest{Scope: e.scope, Content: "Ada keeps bees"}))(t)
	turns := []imprint.Turn{{ID: "t1", Role: imprint.RoleUser, Content: "open question about bees"},
		{ID: "t2", Role: imprint.RoleAssistant, Content: "still thinking"}}
	get(e.db.AppendTurns(ctx, e.scope, "live-1", turns, "ep-live-1"))(t)
	if err := e.db.MarkBetweenPeople(ctx, e.scope, "empty-session"); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if err := e.db.RecordLLMCall(ctx, imprint.LLMCall{Op: "extract.v3", Scope: e.scope, Provider: "openai",
			PromptTokens: 100 + i, Outcome: "ok", Attempt: 1, At: imprint.At(time.Now().Add(-time.Duration(i) * time.Minute))}); err != nil {
			t.Fatal(err)
		}
	}
	get1 := func(j imprint.Job, ok bool, err error) { t.Helper(); get(j, err)(t) }
	get1(e.db.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: e.scope, SessionID: session,
		UniqueKey: imprint.ExtractJobKey(e.scope, session), RunAt: imprint.At(time.Now().Add(time.Hour))}))
	for i, name := range []string{"ci", "old"} {
		k, tok := imprint.NewAPIKey(imprint.KeyScope{Tenant: e.scope.Tenant}, name, false, imprint.Now())
		if err := e.db.CreateAPIKey(ctx, k, imprint.HashAPIKeyToken(tok)); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			get(e.db.RevokeAPIKey(ctx, k.ID, imprint.Now()))(t)
		}
	}
}

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestMigrate: a migration copies every record with its ids, vectors,
// version chains and session state; the copy searches the same; a second
// run finds it done; a target holding other records, or a migration of
// another source, is refused.
func TestMigrate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fillForMigrate(t, e)
	ctx := t.Context()
	want := dumpAll(t, e.db)
	if len(want.Captures) < 4 || len(want.Memories) < 4 || len(want.Keys) != 2 || len(want.Jobs) != 1 {
		t.Fatalf("the source holds %d captures, %d memories, %d keys, %d jobs", len(want.Captures), len(want.Memories), len(want.Keys), len(want.Jobs))
	}

	to := openStore(t)
	dry := get(Migrate(ctx, e.db, to, MigrateOptions{Source: "sqlite:a", DryRun: true}))(t)
	if dry.Source.Messages != len(want.Messages) || dry.Jobs != 1 || dry.Copied != (MigrateCopied{}) {
		t.Errorf("dry run = %+v", dry)
	}
	if c := get(to.DumpCounts(ctx))(t); c != (imprint.DumpCounts{}) {
		t.Fatalf("a dry run wrote %+v", c)
	}
	st := get(Migrate(ctx, e.db, to, MigrateOptions{Source: "sqlite:a"}))(t)
	wantCopied := MigrateCopied{Sessions: len(want.Sessions), Messages: len(want.Messages), Memories: len(want.Memories),
		Episodes: len(want.Captures), Traces: dry.Source.Traces, APIKeys: 2, LLMCalls: 12, Jobs: 1}
	if st.Copied != wantCopied || st.Resumed || st.AlreadyDone {
		t.Errorf("stats = %+v, want copied %+v", st, wantCopied)
	}
	if d := cmp.Diff(want, dumpAll(t, to), sameCopy); d != "" {
		t.Errorf("the copy differs (-source +copy):\n%s", d)
	}
	// What a user sees: pending counts, search by words and by vector.
	for _, s := range want.Sessions {
		a := get(e.db.CountPending(ctx, s.Scope, s.ID))(t)
		b := get(to.CountPending(ctx, s.Scope, s.ID))(t)
		if a != b {
			t.Errorf("session %s: %d pending in the source, %d in the copy", s.ID, a, b)
		}
	}
	vec := get(embedding.NewHash().Embed(ctx, []string{"support group"}))(t)[0]
	for _, k := range []imprint.Kind{imprint.KindMemory, imprint.KindTrace, imprint.KindMessage} {
		tq := imprint.TextQuery{Scope: e.scope, Kind: k, Text: "support group flight", Limit: 20}
		if d := cmp.Diff(get(e.db.SearchText(ctx, tq))(t), get(to.SearchText(ctx, tq))(t)); d != "" {
			t.Errorf("%s keyword search differs:\n%s", k, d)
		}
		vq := imprint.VectorQuery{Scope: e.scope, Kind: k, Vector: vec, Embedder: embedding.NewHash().Name(), Limit: 20}
		src := get(e.db.SearchVector(ctx, vq))(t)
		if len(src) == 0 {
			t.Errorf("%s vector search of the source found nothing", k)
		}
		if d := cmp.Diff(src, get(to.SearchVector(ctx, vq))(t)); d != "" {
			t.Errorf("%s vector search differs:\n%s", k, d)
		}
	}

	again := get(Migrate(ctx, e.db, to, MigrateOptions{Source: "sqlite:a"}))(t)
	if !again.AlreadyDone || again.Copied != (MigrateCopied{}) {
		t.Errorf("second run = %+v, want already done", again)
	}
	// The target in service gets a record of its own: the source is
	// unchanged, so the migration is still done.
	if _, err := to.AppendMessages(ctx, e.scope, "served", []imprint.Message{{ID: "m-served", Role: imprint.RoleUser, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	if again := get(Migrate(ctx, e.db, to, MigrateOptions{Source: "sqlite:a"}))(t); !again.AlreadyDone {
		t.Errorf("run after the target was written to = %+v, want already done", again)
	}
	// The source gets a memory after the migration finished: a run again
	// refuses, naming it, and writes nothing.
	before := get(to.DumpCounts(ctx))(t)
	get(e.m.Remember(ctx, imprint.RememberRequest{Scope: e.scope, Content: "Ada moved her hives to the roof"}))(t)
	for _, dry := range []bool{true, false} {
		_, err := Migrate(ctx, e.db, to, MigrateOptions{Source: "sqlite:a", DryRun: dry})
		if !errors.Is(err, imprint.ErrConflict) || !strings.Contains(err.Error(), "1 memory versions the target lacks") {
			t.Errorf("run (dry %v) after the source got a memory: %v, want ErrConflict naming 1 memory version", dry, err)
		}
	}
	if after := get(to.DumpCounts(ctx))(t); after != before {
		t.Errorf("the refused run changed the target from %+v to %+v", before, after)
	}
	if _, err := Migrate(ctx, e.db, to, MigrateOptions{Source: "sqlite:b"}); !errors.Is(err, imprint.ErrConflict) {
		t.Errorf("migration of another source into the copy: %v, want ErrConflict", err)
	}
	other := openStore(t)
	if _, err := other.AppendMessages(ctx, e.scope, "s", []imprint.Message{{ID: "m1", Role: imprint.RoleUser, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Migrate(ctx, e.db, other, MigrateOptions{Source: "sqlite:a"}); !errors.Is(err, imprint.ErrConflict) {
		t.Errorf("migration into a store with records: %v, want ErrConflict", err)
	}
	if n := get(other.DumpCounts(ctx))(t); n.Messages != 1 || n.Memories != 0 {
		t.Errorf("the refused target holds %+v", n)
	}
}

// TestMigrateResume cuts a migration off after pages of each kind it
// writes, also with its mark a page behind what it wrote (as when the
// process dies between a write and the mark's update), then runs it
// again: each time the copy ends the same as the source, without
// duplicates.
func TestMigrateResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fillForMigrate(t, e)
	want := dumpAll(t, e.db)
	// How many progress calls an uncut run makes.
	calls := 0
	get(Migrate(t.Context(), e.db, openStore(t), MigrateOptions{Source: "src", PageSize: 150,
		Progress: func(MigrateProgress) { calls++ }}))(t)
	if calls < 8 {
		t.Fatalf("an uncut run made %d progress calls; the test wants pages of several kinds", calls)
	}
	if testing.Verbose() {
		t.Logf("%d progress calls", calls)
	}
	// Every other page, alternately with the mark behind (each run is a
	// whole migration: every cut would take a minute here).
	for cut := 1; cut < calls; cut += 2 {
		for _, behind := range []bool{cut%4 == 3} {
			to := openStore(t)
			ctx, cancel := context.WithCancel(t.Context())
			n := 0
			var at MigrateProgress
			_, err := Migrate(ctx, e.db, to, MigrateOptions{Source: "src", PageSize: 150, Progress: func(p MigrateProgress) {
				if n++; n == cut {
					at = p
					cancel()
				}
			}})
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cut %d: %v, want context.Canceled", cut, err)
			}
			// The call log's page and mark are one transaction: its mark
			// is never behind.
			if behind && at.Kind != MigrateLLMCalls {
				mark := get(to.LoadMark(t.Context()))(t)
				delete(mark.Positions, at.Kind) // the kind starts again from its first page
				if err := to.SetLoadMark(t.Context(), mark); err != nil {
					t.Fatal(err)
				}
			}
			st, err := Migrate(t.Context(), e.db, to, MigrateOptions{Source: "src", PageSize: 150})
			if err != nil {
				t.Fatalf("cut %d (%s %d/%d, behind %v): resume: %v", cut, at.Kind, at.Done, at.Total, behind, err)
			}
			if !st.Resumed {
				t.Errorf("cut %d: resumed run says %+v", cut, st)
			}
			if d := cmp.Diff(want, dumpAll(t, to), sameCopy); d != "" {
				t.Fatalf("cut %d (%s %d/%d, behind %v): the resumed copy differs (-source +copy):\n%s", cut, at.Kind, at.Done, at.Total, behind, d)
			}
		}
	}
}
