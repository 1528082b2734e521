package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/shard"
	"github.com/imprint-dev/imprint/sqlite"
)

var testNow = time.Date(2026, 5, 6, 23, 59, 59, 0, time.UTC)

type fixture struct {
	rec   *Recorder
	db    *sqlite.DB
	shard string
}

func newFixture(t *testing.T, d Deps, cfg Config) fixture {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "imprint.db"))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	sdir := filepath.Join(dir, "conversations")
	w, err := shard.NewWriter(sdir)
	if err != nil {
		t.Fatal(err)
	}
	d.Store = db
	d.Conversations = w
	r := NewRecorder(d, cfg)
	r.now = func() time.Time { return testNow }
	return fixture{rec: r, db: db, shard: sdir}
}

func (f fixture) shardLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	err := shard.Read(f.shard, func(line []byte) error {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func user(id, content string) imprint.Message {
	return imprint.Message{ID: id, Role: imprint.RoleUser, Content: content}
}

func assistant(id, content string) imprint.Message {
	return imprint.Message{ID: id, Role: imprint.RoleAssistant, Content: content}
}

var scope = imprint.Scope{Tenant: "t", User: "u", Agent: "a"}

func TestRecordIdempotent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{Embedder: embedding.NewHash()}, Config{})
	ctx := context.Background()
	ts := imprint.At(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	msgs := []imprint.Message{
		user("m1", "I live in Oslo."),
		{Role: imprint.RoleAssistant, Content: "Nice city!", Timestamp: ts},
		{Role: imprint.RoleUser, Content: "ok", Timestamp: ts},
		{Role: imprint.RoleUser, Content: "ok", Timestamp: ts}, // said twice: two messages
	}
	first, err := f.rec.Record(ctx, scope, "s1", msgs)
	if err != nil {
		t.Fatal(err)
	}
	if first.RecordedCount != 4 || len(first.Skipped) != 0 || first.VectorsWritten != 4 {
		t.Fatalf("first record = %+v, want 4 recorded with vectors, none skipped", first)
	}
	if first.MessageIDs[0] != "m1" || first.MessageIDs[2] == first.MessageIDs[3] {
		t.Errorf("ids = %q: want m1 kept and distinct derived ids", first.MessageIDs)
	}
	second, err := f.rec.Record(ctx, scope, "s1", msgs)
	if err != nil {
		t.Fatal(err)
	}
	var wantSkipped []Skipped
	for _, id := range first.MessageIDs {
		wantSkipped = append(wantSkipped, Skipped{ID: id, Reason: ReasonDuplicate})
	}
	want := Result{SessionID: "s1", MessageIDs: []string{}, FilteredMessages: []FilteredMessage{}, Skipped: wantSkipped}
	if diff := cmp.Diff(want, second); diff != "" {
		t.Errorf("second record (-want +got):\n%s", diff)
	}
	if n := len(f.shardLines(t)); n != 4 {
		t.Errorf("shard has %d lines after recording twice, want 4", n)
	}
	// The same id-less content in another session is another message.
	other, err := f.rec.Record(ctx, scope, "s2", msgs[2:3])
	if err != nil {
		t.Fatal(err)
	}
	if other.RecordedCount != 1 {
		t.Errorf("same content in another session: recorded %d, want 1", other.RecordedCount)
	}
}

// TestRecordUnidentifiedRepeatsAreKept checks that a message with neither id
// nor timestamp is never mistaken for an earlier one: "ok" said again in a
// later call is recorded again.
func TestRecordUnidentifiedRepeatsAreKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		res, err := f.rec.Record(ctx, scope, "s1", []imprint.Message{{Role: imprint.RoleUser, Content: "ok"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.RecordedCount != 1 {
			t.Fatalf("call %d: recorded %d, want 1 (%+v)", i, res.RecordedCount, res.Skipped)
		}
	}
}

func TestRecordSkipsEmptyAndBatchDuplicates(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	res, err := f.rec.Record(context.Background(), scope, "s1", []imprint.Message{
		user("e1", "   \n\t "),
		user("e2", "<relevant-memories>\n- User likes tea\n</relevant-memories>"),
		user("e3", "\x00\x07"),
		user("ok", "hello there"),
		assistant("ok", "a different message with a reused id"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Result{
		SessionID: "s1", RecordedCount: 1, MessageIDs: []string{"ok"},
		FilteredMessages: []FilteredMessage{{ID: "ok", Role: imprint.RoleUser, Content: "hello there"}},
		Skipped:          []Skipped{{ID: "e1", Reason: ReasonEmpty}, {ID: "e2", Reason: ReasonEmpty}, {ID: "e3", Reason: ReasonEmpty}, {ID: "ok", Reason: ReasonDuplicate}},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Record (-want +got):\n%s", diff)
	}
}

func TestRecordRedactsBeforeStoreAndShard(t *testing.T) {
	t.Parallel()
	redact := func(s string) string { return strings.ReplaceAll(s, "sk-TESTSECRET", "[REDACTED]") }
	f := newFixture(t, Deps{Redact: redact, Embedder: embedding.NewHash()}, Config{})
	ctx := context.Background()
	res, err := f.rec.Record(ctx, scope, "s1", []imprint.Message{
		user("m1", "my key is sk-TESTSECRET, keep it safe"),
		user("m2", "sk-TESTSECRET"),
	})
	if err != nil {
		t.Fatal(err)
	}
	wantContent := []string{"my key is [REDACTED], keep it safe", "[REDACTED]"}
	for i, id := range []string{"m1", "m2"} {
		got, err := f.db.GetMessage(ctx, scope, "s1", id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != wantContent[i] || res.FilteredMessages[i].Content != wantContent[i] {
			t.Errorf("message %s stored %q, result %q; want %q", id, got.Content, res.FilteredMessages[i].Content, wantContent[i])
		}
	}
	for _, line := range f.shardLines(t) {
		if strings.Contains(line["content"].(string), "TESTSECRET") {
			t.Errorf("shard line holds the secret: %v", line)
		}
	}
	hits, err := f.db.SearchText(ctx, imprint.TextQuery{Scope: scope, Kind: imprint.KindMessage, Text: "TESTSECRET"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 0 {
		t.Errorf("keyword search finds the secret: %+v", hits)
	}
}

func TestRecordShardLine(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	ts := imprint.At(time.Date(2026, 4, 30, 8, 0, 0, 123e6, time.UTC))
	_, err := f.rec.Record(context.Background(), scope, "s1", []imprint.Message{
		{ID: "m1", Role: imprint.RoleUser, Content: "  I moved to Lisbon.\r\n", Timestamp: ts},
		assistant("m2", "Congrats!"),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Lines go to the day of recorded_at (UTC), not of the message time.
	files, err := shard.Files(f.shard)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || filepath.Base(files[0]) != "2026-05-06.jsonl" {
		t.Errorf("shard files = %q, want one 2026-05-06.jsonl", files)
	}
	sc := map[string]any{"tenant": "t", "user": "u", "agent": "a"}
	want := []map[string]any{
		{"id": "m1", "session_id": "s1", "scope": sc, "role": "user", "content": "I moved to Lisbon.",
			"timestamp": "2026-04-30T08:00:00.123Z", "recorded_at": "2026-05-06T23:59:59.000Z"},
		{"id": "m2", "session_id": "s1", "scope": sc, "role": "assistant", "content": "Congrats!",
			"timestamp": "2026-05-06T23:59:59.000Z", "recorded_at": "2026-05-06T23:59:59.000Z"},
	}
	if diff := cmp.Diff(want, f.shardLines(t)); diff != "" {
		t.Errorf("shard lines (-want +got):\n%s", diff)
	}
}

func TestRecordRoundsNotifyScheduler(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{EveryNRounds: 3})
	ctx := context.Background()
	var notified []bool
	for i, m := range []imprint.Message{
		user("u1", "one"), assistant("a1", "reply"), user("u2", "two"), assistant("a2", "reply"), user("u3", "three"),
	} {
		res, err := f.rec.Record(ctx, scope, "s1", []imprint.Message{m})
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		notified = append(notified, res.SchedulerNotified)
	}
	if diff := cmp.Diff([]bool{false, false, false, false, true}, notified); diff != "" {
		t.Errorf("scheduler_notified per call (-want +got):\n%s", diff)
	}
	s, err := f.db.GetSession(ctx, scope, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !s.ExtractionDue || s.RoundsSinceExtraction != 3 {
		t.Errorf("session = due %v rounds %d, want due after 3 user rounds", s.ExtractionDue, s.RoundsSinceExtraction)
	}
	// Re-posting an already recorded message records nothing and notifies nothing.
	res, err := f.rec.Record(ctx, scope, "s1", []imprint.Message{user("u3", "three")})
	if err != nil {
		t.Fatal(err)
	}
	if res.SchedulerNotified || res.RecordedCount != 0 {
		t.Errorf("duplicate re-post = %+v, want nothing recorded or notified", res)
	}
}

func TestRecordDefaultEveryNRounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	var msgs []imprint.Message
	for i := range 5 {
		msgs = append(msgs, user("u"+string(rune('0'+i)), "message"))
	}
	res, err := f.rec.Record(context.Background(), scope, "s1", msgs[:4])
	if err != nil || res.SchedulerNotified {
		t.Fatalf("4 rounds: notified %v err %v, want not notified", res.SchedulerNotified, err)
	}
	res, err = f.rec.Record(context.Background(), scope, "s1", msgs[4:])
	if err != nil || !res.SchedulerNotified {
		t.Fatalf("5th round: notified %v err %v, want notified", res.SchedulerNotified, err)
	}
}

type failingEmbedder struct{ calls int }

func (*failingEmbedder) Name() string    { return "broken/3" }
func (*failingEmbedder) Dimensions() int { return 3 }
func (e *failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	e.calls++
	return nil, fmt.Errorf("embedding endpoint: %w", imprint.ErrUnavailable)
}

func TestRecordEmbedFailureStillRecords(t *testing.T) {
	t.Parallel()
	emb := &failingEmbedder{}
	f := newFixture(t, Deps{Embedder: emb}, Config{})
	ctx := context.Background()
	res, err := f.rec.Record(ctx, scope, "s1", []imprint.Message{user("m1", "hello"), assistant("m2", "hi")})
	if err != nil {
		t.Fatalf("Record with a failing embedder: %v", err)
	}
	if res.RecordedCount != 2 || res.VectorsWritten != 0 {
		t.Errorf("result = %+v, want 2 recorded and 0 vectors", res)
	}
	if emb.calls != 1 {
		t.Errorf("embedder called %d times, want once for the batch", emb.calls)
	}
	m, err := f.db.GetMessage(ctx, scope, "s1", "m1")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Vec) != 0 {
		t.Errorf("message has a vector of %d dims after a failed embed", len(m.Vec))
	}
}

func TestRecordVectors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{Embedder: embedding.NewHash()}, Config{})
	ctx := context.Background()
	res, err := f.rec.Record(ctx, scope, "s1", []imprint.Message{user("m1", "I love hiking in the Alps")})
	if err != nil {
		t.Fatal(err)
	}
	if res.VectorsWritten != 1 {
		t.Errorf("vectors_written = %d, want 1", res.VectorsWritten)
	}
	m, err := f.db.GetMessage(ctx, scope, "s1", "m1")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Vec) != embedding.HashDimensions || m.Embedder != embedding.HashName {
		t.Errorf("stored vector: %d dims by %q, want %d by %q", len(m.Vec), m.Embedder, embedding.HashDimensions, embedding.HashName)
	}
}

func TestRecordInvalid(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	ctx := context.Background()
	tests := []struct {
		name, session string
		msgs          []imprint.Message
		wantField     string
	}{
		{"bad role", "s1", []imprint.Message{user("m1", "hi"), {ID: "m2", Role: "tool", Content: "x"}}, "messages[1].role"},
		{"missing role", "s1", []imprint.Message{{ID: "m1", Content: "x"}}, "messages[0].role"},
		{"no session", "  ", []imprint.Message{user("m1", "hi")}, "session_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.rec.Record(ctx, scope, tc.session, tc.msgs)
			if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("Record error = %v, want ErrInvalid naming %s", err, tc.wantField)
			}
		})
	}
	if _, err := f.db.GetMessage(ctx, scope, "s1", "m1"); !errors.Is(err, imprint.ErrNotFound) {
		t.Errorf("after rejected calls GetMessage(m1) error = %v, want ErrNotFound", err)
	}
	if ss, err := f.db.ListSessions(ctx, scope); err != nil || len(ss) != 0 {
		t.Errorf("after rejected calls sessions = %v (err %v), want none", ss, err)
	}
	if lines := f.shardLines(t); len(lines) != 0 {
		t.Errorf("after rejected calls shard has %d lines", len(lines))
	}
}

func TestRecordDefaultScopeAndTimestamp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	ctx := context.Background()
	if _, err := f.rec.Record(ctx, imprint.Scope{}, "s1", []imprint.Message{user("m1", "hi")}); err != nil {
		t.Fatal(err)
	}
	m, err := f.db.GetMessage(ctx, imprint.DefaultScope(), "s1", "m1")
	if err != nil {
		t.Fatalf("message not in the default scope: %v", err)
	}
	if !m.Timestamp.Equal(testNow) || !m.RecordedAt.Equal(testNow) {
		t.Errorf("timestamp %s recorded_at %s, want both %s", m.Timestamp, m.RecordedAt, testNow)
	}
}

func TestResultJSON(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	res, err := f.rec.Record(context.Background(), scope, "s1", []imprint.Message{user("m1", "hi"), user("m2", "")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"session_id":"s1","recorded_count":1,"message_ids":["m1"],"filtered_messages":[{"id":"m1","role":"user","content":"hi"}],` +
		`"skipped":[{"id":"m2","reason":"empty"}],"vectors_written":0,"scheduler_notified":false}`
	if string(b) != want {
		t.Errorf("result JSON\n got %s\nwant %s", b, want)
	}
	empty, err := json.Marshal(Result{SessionID: "s", MessageIDs: []string{}, FilteredMessages: []FilteredMessage{}, Skipped: []Skipped{}})
	if err != nil {
		t.Fatal(err)
	}
	nothing, err := f.rec.Record(context.Background(), scope, "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(nothing)
	if string(got) != string(empty) {
		t.Errorf("empty call JSON = %s, want %s (lists, not null)", got, empty)
	}
}
