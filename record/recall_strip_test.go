package record

import (
	"context"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/search"
)

// TestRecordStripsRealRecallBlock records prompts into which a host
// injected the block imprint's own Recaller produced from memories in the
// same store: only the user's words are kept, in the store and the shard,
// and a prompt that is nothing but the block is skipped as empty.
func TestRecordStripsRealRecallBlock(t *testing.T) {
	t.Parallel()
	emb := embedding.NewHash()
	f := newFixture(t, Deps{Embedder: emb}, Config{})
	ctx := context.Background()
	for i, m := range []struct {
		typ     imprint.MemoryType
		prio    int
		content string
	}{
		{imprint.MemoryInstruction, -1, "Never deploy the billing service on a Friday."},
		{imprint.MemoryPersona, 50, "The user keeps the billing service on Postgres 16."},
		{imprint.MemoryEpisodic, 60, "The user migrated the billing database to Postgres 16 last spring."},
	} {
		vs, err := emb.Embed(ctx, []string{m.content})
		if err != nil {
			t.Fatal(err)
		}
		mem := imprint.Memory{ID: "mem-" + string(rune('a'+i)), Content: m.content, Type: m.typ, Priority: m.prio, SessionID: "old",
			Scope: scope, Version: 1, Extractor: imprint.ExtractorHeuristic, Embedder: emb.Name(), Vec: vs[0], SourceMessageIDs: []string{"x"}}
		if err := f.db.PutMemory(ctx, mem, nil); err != nil {
			t.Fatal(err)
		}
	}
	rc := search.Recaller{Searcher: search.Searcher{Store: f.db, Embedder: emb}, Memories: f.db, Traces: f.db}
	question := "How should I roll out the billing schema change?"
	rec, err := rc.Recall(ctx, imprint.RecallQuery{Scope: scope, Text: question})
	if err != nil {
		t.Fatal(err)
	}
	block := rec.Context
	for _, want := range []string{"Never deploy the billing service on a Friday.", "Postgres 16"} {
		if !strings.Contains(block, want) {
			t.Fatalf("the recall block lacks %q; the test needs a real block:\n%s", want, block)
		}
	}
	tests := []struct {
		id, content, want string
	}{
		{"before", block + "\n\n" + question, question},
		{"after", question + "\n" + block, question},
		{"between", "First part.\n" + block + "\nSecond part.", "First part.\n\nSecond part."},
		{"crlf", strings.ReplaceAll(block, "\n", "\r\n") + "\r\n" + question, question},
		{"only", block, ""},
	}
	msgs := make([]imprint.Message, len(tests))
	for i, tc := range tests {
		msgs[i] = user(tc.id, tc.content)
	}
	res, err := f.rec.Record(ctx, scope, "s1", msgs)
	if err != nil {
		t.Fatal(err)
	}
	shard := map[string]string{}
	for _, line := range f.shardLines(t) {
		shard[line["id"].(string)] = line["content"].(string)
	}
	for _, tc := range tests {
		got, err := f.db.GetMessage(ctx, scope, "s1", tc.id)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: a prompt holding only the recall block was stored as %q", tc.id, got.Content)
			}
			if !strings.Contains(skippedIDs(res), tc.id+":"+ReasonEmpty) {
				t.Errorf("%s: not reported skipped as empty: %+v", tc.id, res.Skipped)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		if got.Content != tc.want {
			t.Errorf("%s: stored %q, want only the user's text %q", tc.id, got.Content, tc.want)
		}
		if shard[tc.id] != tc.want {
			t.Errorf("%s: shard line %q, want %q", tc.id, shard[tc.id], tc.want)
		}
	}
	hits, err := f.db.SearchText(ctx, imprint.TextQuery{Scope: scope, Kind: imprint.KindMessage, Text: "Friday Postgres"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 0 {
		t.Errorf("recalled memories were recorded as messages: %+v", hits)
	}
}

func skippedIDs(r Result) string {
	var b strings.Builder
	for _, s := range r.Skipped {
		b.WriteString(s.ID + ":" + s.Reason + " ")
	}
	return b.String()
}
