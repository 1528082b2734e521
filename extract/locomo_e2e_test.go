package extract

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// blockRe matches one message block of the extraction prompt:
// [<id>] [<role>] [<time>]: <content>.
var blockRe = regexp.MustCompile(`(?m)^\[([^\]]+)\] \[(user|assistant)\] \[([^\]]+)\]: (.*)$`)

// locomoFake answers extraction calls the way a model would, computed from
// the request: one episodic memory per window, from the window's first new
// user message, dated by that message's timestamp, in a scene that changes
// every third window; the judge stores everything it is asked about. It
// records the previous scene each window was sent and the scene it got back.
type locomoFake struct {
	mu       sync.Mutex
	windows  int
	prevSent []string // PREVIOUS SCENE line of each extraction request
	returned []string // scene name returned for each request
	newIDs   [][]string
}

func (f *locomoFake) extract(r llmtest.Request) llmtest.Reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	prev := strings.TrimPrefix(strings.SplitN(r.User, "\n", 2)[0], "PREVIOUS SCENE: ")
	newPart := r.User[strings.Index(r.User, "NEW MESSAGES:"):]
	var ids []string
	var mem map[string]any
	for _, m := range blockRe.FindAllStringSubmatch(newPart, -1) {
		ids = append(ids, m[1])
		if mem == nil && m[2] == "user" {
			mem = map[string]any{
				"content": fmt.Sprintf("On %s the user said: %s", m[3][:10], m[4]),
				"type":    "episodic", "priority": 70,
				"source_message_ids": []string{m[1]},
				"metadata":           map[string]string{"activity_start_time": m[3], "activity_end_time": m[3]},
			}
		}
	}
	scene := fmt.Sprintf("chapter %d", f.windows/3)
	f.windows++
	f.prevSent = append(f.prevSent, prev)
	f.returned = append(f.returned, scene)
	f.newIDs = append(f.newIDs, ids)
	var mems []any
	if mem != nil {
		mems = append(mems, mem)
	}
	return llmtest.JSON(map[string]any{"scenes": []any{map[string]any{"scene_name": scene, "message_ids": ids, "memories": mems}}})
}

func judgeStoreAll(r llmtest.Request) llmtest.Reply {
	var doc struct {
		NewMemories []struct {
			ID string `json:"id"`
		} `json:"new_memories"`
	}
	_ = json.Unmarshal([]byte(r.User), &doc)
	var ds []any
	for _, m := range doc.NewMemories {
		ds = append(ds, map[string]any{"record_id": m.ID, "action": "store", "target_ids": []string{}})
	}
	return llmtest.JSON(map[string]any{"decisions": ds})
}

// TestLoCoMoEndToEnd extracts both LoCoMo conversations window after window:
// no pending message is skipped, session dates become message timestamps
// and memory times, the scene carries over between windows, and extracting
// the same conversation again (as a new session of the same scope) stores
// no duplicate.
func TestLoCoMoEndToEnd(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "shared", "testdata", "locomo", "locomo-2conv.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("LoCoMo test data: %v", err)
	}
	defer f.Close()
	trs, err := importer.ReadLoCoMo(f, path, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 2 {
		t.Fatalf("want 2 conversations, got %d", len(trs))
	}
	e := newTestEnv(t, DefaultConfig())
	fake := &locomoFake{}
	e.srv.Handle(OpExtract, fake.extract)
	e.srv.Handle(OpDedup, judgeStoreAll)

	tr := trs[0]
	msgs := make([]imprint.Message, len(tr.Messages))
	for i, m := range tr.Messages {
		m.SessionID, m.Scope = tr.SessionID, e.scope
		m.RecordedAt = imprint.Now()
		msgs[i] = m
	}
	if _, err := e.db.AppendMessages(e.ctx, e.scope, tr.SessionID, msgs); err != nil {
		t.Fatal(err)
	}
	var results []Result
	if err := e.runner.ExtractPending(e.ctx, e.scope, tr.SessionID, func(r Result) { results = append(results, r) }); err != nil {
		t.Fatal(err)
	}

	// Every message was consumed by exactly one window, in order.
	seen := map[string]int{}
	for _, r := range results {
		if !r.Success {
			t.Fatalf("window failed: %+v", r)
		}
		for _, id := range r.MessageIDs {
			seen[id]++
		}
	}
	for _, m := range msgs {
		if seen[m.ID] != 1 {
			t.Fatalf("message %s consumed %d times", m.ID, seen[m.ID])
		}
	}
	if n, _ := e.db.CountPending(e.ctx, e.scope, tr.SessionID); n != 0 {
		t.Fatalf("%d messages still pending", n)
	}
	// Scene continuity: each window was told the scene the previous one ended in.
	if fake.prevSent[0] != "(none)" {
		t.Errorf("first window's previous scene %q, want (none)", fake.prevSent[0])
	}
	for i := 1; i < len(fake.prevSent); i++ {
		if fake.prevSent[i] != fake.returned[i-1] {
			t.Fatalf("window %d was sent previous scene %q, want %q", i, fake.prevSent[i], fake.returned[i-1])
		}
	}
	// Session dates became message timestamps, and memory times are the
	// source messages' times.
	mems, err := e.db.ListMemories(e.ctx, e.scope, imprint.MemoryFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) < len(results)/2 {
		t.Fatalf("only %d memories from %d windows", len(mems), len(results))
	}
	byID := map[string]imprint.Message{}
	for _, m := range msgs {
		byID[m.ID] = m
	}
	for _, m := range mems {
		src := byID[m.SourceMessageIDs[0]]
		if len(m.Timestamps) != 1 || !m.Timestamps[0].Equal(src.Timestamp.Time) || src.Timestamp.Year() != 2023 {
			t.Fatalf("memory %q times %v, source message time %v", m.Content, m.Timestamps, src.Timestamp)
		}
		if !strings.HasPrefix(m.Metadata.ActivityStartTime, "2023-") {
			t.Fatalf("episodic memory without its 2023 activity time: %+v", m.Metadata)
		}
	}

	// Extracting the same conversation again in a new session of the same
	// scope stores nothing new: every memory is an exact repeat.
	again := tr.SessionID + "-replayed"
	for i := range msgs {
		msgs[i].SessionID = again
	}
	if _, err := e.db.AppendMessages(e.ctx, e.scope, again, msgs); err != nil {
		t.Fatal(err)
	}
	stored := 0
	if err := e.runner.ExtractPending(e.ctx, e.scope, again, func(r Result) { stored += r.StoredCount }); err != nil {
		t.Fatal(err)
	}
	if stored != 0 {
		t.Errorf("re-extraction stored %d memories, want 0 (all duplicates)", stored)
	}
	after, _ := e.db.CountMemories(e.ctx, e.scope)
	if after != len(mems) {
		t.Errorf("live memories %d after re-extraction, want %d", after, len(mems))
	}
}
