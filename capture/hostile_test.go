package capture

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
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
