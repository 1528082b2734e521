package ingest

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/shard"
)

// fakeLLM is a provider speaking the OpenAI wire format that answers
// capture's scoring and extraction's prompts as a model would: a
// reflection and an α for every step, a memory of each new user message of
// a window, and "store" for every memory the conflict judge is shown.
func fakeLLM(t *testing.T) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(t)
	srv.Handle(capture.OpBatch, echoScores(t))
	srv.Script(capture.OpSynth, llmtest.Text("I looked the reservation up first because the customer asked about it."))
	srv.Script(capture.OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.6, "usable": true, "reason": "concrete"}))
	srv.Handle(extract.OpExtract, userMemories(t))
	srv.Handle(extract.OpDedup, storeAll(t))
	return srv
}

// client returns an LLM client of srv, with budget when it is not nil.
func client(t *testing.T, srv *llmtest.Server, budget *llm.Budget) *llm.Client {
	return llmtest.NewClient(t, srv, llmtest.FormatOpenAI, func(o *llm.Options) { o.Budget = budget })
}

// newBlock is the head of a message block of an extraction prompt.
var newBlock = regexp.MustCompile(`(?m)^\[([^\]]*)\] \[(user|assistant)\] \[[^\]]*\]: (.*)$`)

// userMemories answers an extraction prompt with one scene of its new
// messages and an episodic memory of each user message.
func userMemories(t *testing.T) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		_, nw, ok := strings.Cut(r.User, "\nNEW MESSAGES:\n")
		if !ok {
			t.Errorf("extraction prompt without its new messages:\n%s", r.User)
			return llmtest.Fault500()
		}
		ids := []string{}
		mems := []map[string]any{}
		for _, m := range newBlock.FindAllStringSubmatch(nw, -1) {
			ids = append(ids, m[1])
			if m[2] == "user" {
				text := []rune(strings.TrimSpace(m[3]))
				mems = append(mems, map[string]any{"content": "The customer said: " + string(text[:min(len(text), 120)]),
					"type": "episodic", "priority": 60, "source_message_ids": []string{m[1]}})
			}
		}
		return llmtest.JSON(map[string]any{"scenes": []map[string]any{{"scene_name": "Airline support", "message_ids": ids, "memories": mems}}})
	}
}

// storeAll answers the conflict judge with store for every new memory.
func storeAll(t *testing.T) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		var req struct {
			NewMemories []struct {
				ID string `json:"id"`
			} `json:"new_memories"`
		}
		if err := json.Unmarshal([]byte(r.User), &req); err != nil {
			t.Errorf("judge request: %v", err)
			return llmtest.Fault500()
		}
		ds := []map[string]any{}
		for _, m := range req.NewMemories {
			ds = append(ds, map[string]any{"record_id": m.ID, "action": "store", "target_ids": []string{}})
		}
		return llmtest.JSON(map[string]any{"decisions": ds})
	}
}

// recordsLog returns a records log in a temporary folder.
func recordsLog(t *testing.T) *shard.Writer {
	t.Helper()
	w, err := shard.NewWriter(filepath.Join(t.TempDir(), "records"))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// opCounts returns how many requests srv got of each op.
func opCounts(srv *llmtest.Server) map[string]int {
	out := map[string]int{}
	for _, r := range srv.Requests() {
		out[r.Op]++
	}
	return out
}

// scoringConfig is capture's configuration with the model writing the
// reflections the transcripts lack and grading every step, so that a
// capture calls the model.
func scoringConfig() capture.Config {
	c := capture.DefaultConfig()
	c.SynthReflections, c.AlphaScoring, c.EmbedTraces = true, true, false
	return c
}
