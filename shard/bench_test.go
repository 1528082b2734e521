package shard

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// benchLog writes n record-like lines over 30 day files.
func benchLog(b *testing.B, n int) *Writer {
	b.Helper()
	w, err := NewWriter(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const batch = 1000
	for i := 0; i < n; i += batch {
		vals := make([]any, 0, batch)
		for j := i; j < i+batch && j < n; j++ {
			vals = append(vals, map[string]any{"op": "store", "at": day0, "memory": map[string]any{
				"id": fmt.Sprintf("mem-%07d", j), "content": fmt.Sprintf("User said fact number %d about their travel plans and preferences", j)}})
		}
		if err := w.Append(vals, func(k int) time.Time { return day0.AddDate(0, 0, (i+k)%30) }); err != nil {
			b.Fatal(err)
		}
	}
	return w
}

// BenchmarkReadLog is the baseline of BenchmarkPurgeRewrite: reading every
// line of a 100k-line records log once.
func BenchmarkReadLog(b *testing.B) {
	w := benchLog(b, 100_000)
	b.ResetTimer()
	for b.Loop() {
		if err := w.Read(func([]byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPurgeRewrite is what a purge costs the shards: every day file
// of a 100k-line log read, and the one holding the memory rewritten.
func BenchmarkPurgeRewrite(b *testing.B) {
	w := benchLog(b, 100_000)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		id := []byte(fmt.Sprintf(`"mem-%07d"`, i))
		i++
		if _, err := w.Rewrite(func(line []byte) bool { return !bytes.Contains(line, id) }); err != nil {
			b.Fatal(err)
		}
	}
}
