package capture

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
)

// A tool input that is not JSON, or nests deeper than a JSON decoder
// accepts, is kept as a JSON string instead of failing the save.
func TestCaptureToolInputNotJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	r := NewRunner(Deps{Store: db}, DefaultConfig())
	truncated := `{"path": "a.txt", "body":`
	nested := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	ep := episode(U("write it", 0), A("writing", 10), T("write", truncated, "written", 20), T("nest", nested, "ok", 25),
		T("fine", `{"a": 1}`, "ok", 30))
	res, err := r.Run(ctx, ep, "")
	if err != nil {
		t.Fatalf("capture failed: %v", err)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatalf("result does not encode: %v", err)
	}
	stored, err := db.ListTraces(ctx, imprint.DefaultScope(), imprint.TraceFilter{EpisodeID: "ep-1"})
	if err != nil || len(stored) != 1 || len(stored[0].ToolCalls) != 3 {
		t.Fatalf("stored %+v, %v; want one trace with 3 calls", stored, err)
	}
	calls := stored[0].ToolCalls
	for i, want := range []string{truncated, nested} {
		var s string
		if err := json.Unmarshal(calls[i].Input, &s); err != nil || s != want {
			t.Errorf("call %d input %.60s..., want the text as a JSON string", i, calls[i].Input)
		}
	}
	if string(calls[2].Input) != `{"a":1}` {
		t.Errorf("valid input changed to %s", calls[2].Input)
	}
}

// Invalid UTF-8 and NUL bytes do not reach the store, and the result says
// what was stored.
func TestCaptureInvalidText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	r := NewRunner(Deps{Store: db, Embedder: embedding.NewHash()}, DefaultConfig())
	tool := T("read", `{"f":"x"}`, "out\x00put \xff\xfe bad", 20)
	tool.Meta.Error = "fail\x00ed \xff"
	ep := episode(U("hello\x00 \xc3( world", 0), AR("reply \xe2\x82 done", "I read it \xff because\x00 it was there.", 10), tool)
	res, err := r.Run(ctx, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := db.ListTraces(ctx, imprint.DefaultScope(), imprint.TraceFilter{EpisodeID: "ep-1"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored %d traces, %v", len(stored), err)
	}
	tr := stored[0]
	texts := []string{tr.UserText, tr.AgentText, deref(tr.Reflection), tr.ToolCalls[0].Output, tr.ToolCalls[0].Error}
	for _, s := range texts {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			t.Errorf("stored text %q has invalid UTF-8 or NUL", s)
		}
	}
	if !strings.Contains(tr.UserText, "hello") || !strings.Contains(tr.UserText, "world") || !strings.Contains(tr.ToolCalls[0].Output, "bad") {
		t.Errorf("valid parts lost: %q, %q", tr.UserText, tr.ToolCalls[0].Output)
	}
	if tr.UserText != res.Traces[0].UserText || tr.AgentText != res.Traces[0].AgentText {
		t.Errorf("stored texts %q/%q differ from the result's %q/%q", tr.UserText, tr.AgentText, res.Traces[0].UserText, res.Traces[0].AgentText)
	}
}
