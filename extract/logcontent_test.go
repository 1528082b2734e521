package extract

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestLogsCarryNoMemoryContents: at info the extraction log names the
// memories it stored by id and type only; their contents appear at debug
// alone.
func TestLogsCarryNoMemoryContents(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		t.Run(level.String(), func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			e := newTestEnv(t, smallConfig(10, 5), withEmbedder(), func(e *testEnv) {
				e.deps.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: level}))
			})
			e.srv.Handle(OpExtract, rememberExtractor(t, "Facts"))
			e.record("s1", e.baseDay, "remember: The user plays the theremin.")
			res, _, err := e.runner.ExtractNext(e.ctx, e.scope, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if res.StoredCount != 1 {
				t.Fatalf("stored %d memories, want 1", res.StoredCount)
			}
			got := strings.Contains(logs.String(), "theremin")
			if level == slog.LevelInfo && got {
				t.Errorf("an info log holds the memory's content:\n%s", logs.String())
			}
			if level == slog.LevelDebug && !got {
				t.Errorf("the debug log lacks the memory's content:\n%s", logs.String())
			}
			if !strings.Contains(logs.String(), res.Records[0].ID) {
				t.Errorf("the log does not name the stored memory %s:\n%s", res.Records[0].ID, logs.String())
			}
		})
	}
}
