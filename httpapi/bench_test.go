package httpapi

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// BenchmarkPostMessages posts batches of 5 messages from parallel
// sessions through the client, the server and the real SQLite store.
func BenchmarkPostMessages(b *testing.B) {
	e := newEnv(b, Config{})
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		sid := fmt.Sprintf("s%d", next.Add(1))
		i := 0
		for pb.Next() {
			msgs := make([]imprint.Message, 5)
			for j := range msgs {
				msgs[j] = imprint.Message{Role: imprint.RoleUser, Content: fmt.Sprintf("message %d of batch %d in %s about flights", j, i, sid)}
			}
			i++
			if _, err := e.c.Record(context.Background(), scopeA, sid, msgs); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRecall measures GET /v1/recall over a store with instructions,
// memories and traces.
func BenchmarkRecall(b *testing.B) {
	e := newEnv(b, Config{})
	for i := range 200 {
		typ := []imprint.MemoryType{imprint.MemoryPersona, imprint.MemoryEpisodic, imprint.MemoryInstruction}[i%3]
		e.putMemory(imprint.Memory{ID: fmt.Sprintf("m%d", i), Content: fmt.Sprintf("fact %d about flights, hotels and seat %d", i, i),
			Type: typ, Priority: 70, SessionID: "s1", Scope: scopeA})
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.c.Recall(context.Background(), imprint.RecallQuery{Scope: scopeA, Text: "seat on flights", SessionID: "s1"}); err != nil {
			b.Fatal(err)
		}
	}
}
