package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/sqlite"
)

// TestRecordRedactsSecretsEndToEnd records messages holding real-shaped
// secrets through `imprint record` (the binary's own wiring, not a stub
// redactor) and checks that no secret reaches any byte under the data dir
// (the database and its WAL, the conversations shard, the records shard)
// nor any output of record, search, extract and memories, while the rest of
// each message is kept with a redaction marker in the secret's place.
func TestRecordRedactsSecretsEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Built from parts so the repository holds no literal secret.
	openai := strings.Join([]string{"sk-", "proj-", "Qw7_eR2tY9-uI4oP8aS1dF6gH3jK5lZ0xC", "vB7nM2qW9eR4tY8uI1oP6aS3d"}, "")
	awsID := strings.Join([]string{"AKIA", "Q3WERT7YUIOP2ASD"}, "")
	awsSecret := strings.Join([]string{"hJ8kL2mN4pQ6rS8tU0", "vW2xY4zA6bC8dE0fG2hI4jK6"}, "")
	secrets := []string{openai, awsID, awsSecret}
	in := map[string]any{"session_id": "ops-1", "messages": []any{
		map[string]any{"id": "u1", "role": "user", "timestamp": "2026-05-04T09:00:00Z",
			"content": "Remember that I always deploy with the staging OpenAI key " + openai + " exported in my shell."},
		map[string]any{"id": "a1", "role": "assistant", "timestamp": "2026-05-04T09:00:05Z",
			"content": "Understood. I will not repeat " + openai + " back to you."},
		map[string]any{"id": "u2", "role": "user", "timestamp": "2026-05-04T09:01:00Z",
			"content": "My AWS profile uses access key " + awsID + " and\naws_secret_access_key = " + awsSecret + "\nfor the billing account."},
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	file := writeTemp(t, "secret.json", string(b))

	var outputs []string
	run := func(args ...string) result {
		t.Helper()
		r := runImprint(t, nil, append(args, "--data-dir", dir)...)
		if r.code != 0 {
			t.Fatalf("imprint %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		outputs = append(outputs, args[0]+" output:\n"+r.stdout+r.stderr)
		return r
	}
	rec := jsonLines[map[string]any](t, run("record", "--json", file))
	if len(rec) != 1 || rec[0]["recorded_count"] != float64(3) {
		t.Fatalf("record result %+v: want the 3 messages recorded (redacted, not dropped)", rec)
	}
	run("extract", "--json", "--all")
	mems := jsonLines[imprint.Memory](t, run("memories", "--json", "--all-versions"))
	if len(mems) == 0 {
		t.Fatalf("the heuristic extractor kept nothing from %q; the test needs a memory to check", in)
	}
	hits := jsonLines[imprint.Hit](t, run("search", "--json", "--kind", "all", "deploy staging OpenAI key AWS access billing"))
	if len(hits) == 0 {
		t.Fatalf("search found nothing; the test needs hits to check")
	}
	run("search", "--json", "--kind", "message", strings.TrimPrefix(openai, "sk-"))
	run("search", "--json", "--kind", "message", awsID)
	for _, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("secret %.8s… in the %s", s, out)
			}
		}
	}

	// The stored messages keep their text with a marker for the secret.
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := db.MessagesBefore(context.Background(), imprint.DefaultScope(), "ops-1", math.MaxInt64, 100)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("stored %d messages, want 3", len(msgs))
	}
	for _, m := range msgs {
		if !strings.Contains(m.Content, "[REDACTED:") {
			t.Errorf("message %s stored without a redaction marker: %q", m.ID, m.Content)
		}
	}
	if !strings.Contains(msgs[2].Content, "for the billing account.") {
		t.Errorf("the text around the secrets was not kept: %q", msgs[2].Content)
	}

	// No byte of any file under the data dir holds a secret.
	shards := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasPrefix(p, filepath.Join(dir, "conversations")+string(filepath.Separator)) && strings.HasSuffix(p, ".jsonl") {
			shards++
			if !strings.Contains(string(b), "[REDACTED:") {
				t.Errorf("conversations shard %s has no redaction marker", p)
			}
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("secret %.8s… written to %s", s, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if shards == 0 {
		t.Fatalf("no conversations JSONL shard under %s", dir)
	}
}
