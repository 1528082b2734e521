package record

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/internal/testfiles"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/shard"
	"github.com/imprint-dev/imprint/sqlite"
)

// locomoTexts returns the texts of the shared LoCoMo conversations, real
// chat messages of realistic length (the repository's testdata folder).
func locomoTexts(b *testing.B) []string {
	b.Helper()
	data, err := os.ReadFile(testfiles.Path(b, "locomo/locomo-2conv.json"))
	if err != nil {
		b.Fatalf("LoCoMo testdata: %v", err)
	}
	var samples []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(data, &samples); err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, s := range samples {
		for _, raw := range s.Conversation {
			var turns []struct {
				Text string `json:"text"`
			}
			if json.Unmarshal(raw, &turns) == nil {
				for _, t := range turns {
					texts = append(texts, t.Text)
				}
			}
		}
	}
	return texts
}

// BenchmarkRecord measures recording throughput: batches of messages
// (alternating user/assistant, real LoCoMo texts) through sanitize, redact
// (redact.String), the hash embedder, a file-backed SQLite store and the
// conversations day shard. msgs/s counts committed messages only.
func BenchmarkRecord(b *testing.B) {
	for _, batch := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			texts := locomoTexts(b)
			ctx := context.Background()
			dir := b.TempDir()
			db, err := sqlite.Open(ctx, filepath.Join(dir, "imprint.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			w, err := shard.NewWriter(filepath.Join(dir, "conversations"))
			if err != nil {
				b.Fatal(err)
			}
			rec := NewRecorder(Deps{Store: db, Embedder: embedding.NewHash(), Redact: redact.String, Conversations: w}, Config{})
			sc := imprint.DefaultScope()
			msgs := make([]imprint.Message, batch)
			committed := 0
			n := 0
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				for j := range msgs {
					role := imprint.RoleUser
					if n%2 == 1 {
						role = imprint.RoleAssistant
					}
					msgs[j] = imprint.Message{ID: fmt.Sprintf("m%d", n), Role: role, Content: texts[n%len(texts)]}
					n++
				}
				// A session per 1,000 messages, as many agents talk at once.
				res, err := rec.Record(ctx, sc, fmt.Sprintf("s%d", n/1000), msgs)
				if err != nil {
					b.Fatal(err)
				}
				committed += res.RecordedCount
			}
			elapsed := time.Since(start)
			b.StopTimer()
			if committed != b.N*batch {
				b.Fatalf("committed %d of %d messages", committed, b.N*batch)
			}
			b.ReportMetric(float64(committed)/elapsed.Seconds(), "msgs/s")
		})
	}
}
