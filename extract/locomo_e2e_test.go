package extract

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/internal/testfiles"

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

// TestLoCoMoEndToEnd extracts both LoCoMo conversations (conv-26 and
// conv-30), each as its own session of one scope, window after window: no
// pending message is skipped, session dates become message timestamps and
// memory times, the scene carries over between the windows of a session
// (and not from one session into the next), and extracting both
// conversations again (as new sessions of the same scope) stores no
// duplicate.
func TestLoCoMoEndToEnd(t *testing.T) {
	t.Parallel()
	path := testfiles.Path(t, "locomo/locomo-2conv.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("LoCoMo test data: %v", err)
	}
	defer f.Close()
	trs, err := importer.ReadLoCoMo(f, path, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 2 || trs[0].SessionID == trs[1].SessionID {
		t.Fatalf("want 2 conversations, got %d", len(trs))
	}
	e := newTestEnv(t, DefaultConfig())
	fake := &locomoFake{}
	e.srv.Handle(OpExtract, fake.extract)
	e.srv.Handle(OpDedup, judgeStoreAll)

	byID := map[string]imprint.Message{}
	convMsgs := make([][]imprint.Message, len(trs))
	total := 0
	for ci, tr := range trs {
		msgs := make([]imprint.Message, len(tr.Messages))
		for i, m := range tr.Messages {
			m.SessionID, m.Scope = tr.SessionID, e.scope
			m.RecordedAt = imprint.Now()
			msgs[i] = m
			byID[m.ID] = m
		}
		if len(msgs) == 0 {
			t.Fatalf("conversation %s has no messages", tr.SessionID)
		}
		convMsgs[ci] = msgs
		if _, err := e.db.AppendMessages(e.ctx, e.scope, tr.SessionID, msgs); err != nil {
			t.Fatal(err)
		}

		first := len(fake.prevSent) // the fake's requests are this session's from here
		var results []Result
		if err := e.runner.ExtractPending(e.ctx, e.scope, tr.SessionID, func(r Result) { results = append(results, r) }); err != nil {
			t.Fatalf("%s: %v", tr.SessionID, err)
		}
		total += len(results)

		// Every message was consumed by exactly one window.
		seen := map[string]int{}
		for _, r := range results {
			if !r.Success {
				t.Fatalf("%s: window failed: %+v", tr.SessionID, r)
			}
			for _, id := range r.MessageIDs {
				seen[id]++
			}
		}
		for _, m := range msgs {
			if seen[m.ID] != 1 {
				t.Fatalf("%s: message %s consumed %d times", tr.SessionID, m.ID, seen[m.ID])
			}
		}
		if len(seen) != len(msgs) {
			t.Fatalf("%s: windows consumed %d messages, the conversation has %d", tr.SessionID, len(seen), len(msgs))
		}
		if n, _ := e.db.CountPending(e.ctx, e.scope, tr.SessionID); n != 0 {
			t.Fatalf("%s: %d messages still pending", tr.SessionID, n)
		}
		// Scene continuity: each window was told the scene the previous
		// window of its session ended in; a new session starts with none.
		sent, returned := fake.prevSent[first:], fake.returned[first:]
		if len(sent) < 2 {
			t.Fatalf("%s: %d extraction windows, want several", tr.SessionID, len(sent))
		}
		if sent[0] != "(none)" {
			t.Errorf("%s: first window's previous scene %q, want (none)", tr.SessionID, sent[0])
		}
		for i := 1; i < len(sent); i++ {
			if sent[i] != returned[i-1] {
				t.Fatalf("%s: window %d was sent previous scene %q, want %q", tr.SessionID, i, sent[i], returned[i-1])
			}
		}
		// The session's memories come from its own messages.
		own, err := e.db.ListMemories(e.ctx, e.scope, imprint.MemoryFilter{SessionID: tr.SessionID, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(own) < len(results)/2 {
			t.Fatalf("%s: only %d memories from %d windows", tr.SessionID, len(own), len(results))
		}
		for _, m := range own {
			for _, id := range m.SourceMessageIDs {
				if byID[id].SessionID != tr.SessionID {
					t.Fatalf("%s: memory %q cites message %s of another conversation", tr.SessionID, m.Content, id)
				}
			}
		}
	}

	// Session dates became message timestamps, and memory times are the
	// source messages' times.
	mems, err := e.db.ListMemories(e.ctx, e.scope, imprint.MemoryFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) < total/2 {
		t.Fatalf("only %d memories from %d windows", len(mems), total)
	}
	perConv := map[string]int{}
	for _, m := range mems {
		src, ok := byID[m.SourceMessageIDs[0]]
		if !ok {
			t.Fatalf("memory %q cites unknown message %s", m.Content, m.SourceMessageIDs[0])
		}
		perConv[src.SessionID]++
		if len(m.Timestamps) != 1 || !m.Timestamps[0].Equal(src.Timestamp.Time) || src.Timestamp.Year() != 2023 {
			t.Fatalf("memory %q times %v, source message time %v", m.Content, m.Timestamps, src.Timestamp)
		}
		if !strings.HasPrefix(m.Metadata.ActivityStartTime, "2023-") {
			t.Fatalf("episodic memory without its 2023 activity time: %+v", m.Metadata)
		}
	}
	for _, tr := range trs {
		if perConv[tr.SessionID] == 0 {
			t.Errorf("no memory from conversation %s", tr.SessionID)
		}
	}

	// Extracting both conversations again in new sessions of the same
	// scope stores nothing new: every memory is an exact repeat.
	for ci, tr := range trs {
		again := tr.SessionID + "-replayed"
		msgs := append([]imprint.Message(nil), convMsgs[ci]...)
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
			t.Errorf("re-extraction of %s stored %d memories, want 0 (all duplicates)", tr.SessionID, stored)
		}
	}
	after, _ := e.db.CountMemories(e.ctx, e.scope)
	if after != len(mems) {
		t.Errorf("live memories %d after re-extraction, want %d", after, len(mems))
	}
}
