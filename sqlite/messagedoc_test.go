package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// TestMigrationReindexesMessagesWithContext opens a database whose
// message index predates migration 0004 (words only) and checks that the
// migration rebuilds it: the stored messages are found by speaker, date and
// previous turn, each conversation's first turn with no context from
// another conversation.
func TestMigrationReindexesMessagesWithContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "imprint.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	day := time.Date(2023, 5, 8, 12, 0, 0, 0, time.UTC)
	put := func(session string, msgs ...imprint.Message) {
		t.Helper()
		for i := range msgs {
			msgs[i].Timestamp = imprint.At(day.Add(time.Duration(i) * time.Second))
			msgs[i].Role = imprint.RoleUser
		}
		if _, err := db.AppendMessages(ctx, scope, session, msgs); err != nil {
			t.Fatal(err)
		}
	}
	put("a", imprint.Message{ID: "a1", Speaker: "Caroline", Content: "I went hiking in the dunes yesterday."},
		imprint.Message{ID: "a2", Speaker: "Melanie", Content: "How lovely! Pictures please."})
	put("b", imprint.Message{ID: "b1", Speaker: "Jon", Content: "My studio opens soon."})
	// Back to the index of migrations 0001-0003.
	for _, q := range []string{
		`DROP TABLE message_words`,
		`CREATE VIRTUAL TABLE message_words USING fts5 (text, tokenize = 'porter unicode61', content = '', contentless_delete = 1)`,
		`INSERT INTO message_words (rowid, text) SELECT seq, content FROM messages`,
		`DELETE FROM migrations WHERE version = 4`,
	} {
		if _, err := db.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"Caroline", []string{"a1"}},
		{"dunes", []string{"a1", "a2"}},    // a2 answers a1
		{"7 May", []string{"a1"}},          // a1's yesterday
		{"Jon studio", []string{"b1"}},     // b1's context is not a2
		{"pictures", []string{"a2", "a1"}}, // a2 answers a1
	} {
		hits, err := db.SearchText(ctx, imprint.TextQuery{Scope: scope, Kind: imprint.KindMessage, Text: tc.query})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.ID)
		}
		if len(got) == 0 || got[0] != tc.want[0] || (tc.query != "7 May" && len(got) != len(tc.want)) {
			t.Errorf("%q = %v, want %v", tc.query, got, tc.want)
		}
	}
}

// A batch's messages are indexed as when appended one call each: each
// answers the one before it (a message repeated in the batch answers
// nobody), whose name is left out of its words.
func TestBatchIndexesMessagesAsOneByOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	day := time.Date(2023, 5, 8, 12, 0, 0, 0, time.UTC)
	msgs := []imprint.Message{
		{ID: "m1", Speaker: "Caroline", Content: "Melanie, I hiked in the dunes."},
		{ID: "m2", Speaker: "Melanie", Content: "Wow, Caroline! Lovely dunes."},
		{ID: "m2", Speaker: "Zed", Content: "Wow, Caroline! Lovely dunes."},
		{ID: "m3", Speaker: "Caroline", Content: "Melanie, Zed took the pictures."},
	}
	for i := range msgs {
		msgs[i].Timestamp = imprint.At(day.Add(time.Duration(i) * time.Second))
		msgs[i].Role = imprint.RoleUser
	}
	search := func(db *DB, q string) []string {
		hits, err := db.SearchText(ctx, imprint.TextQuery{Scope: scope, Kind: imprint.KindMessage, Text: q})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		slices.Sort(ids)
		return ids
	}
	batch, single := openTemp(t), openTemp(t)
	defer batch.Close()
	defer single.Close()
	if _, err := batch.AppendMessages(ctx, scope, "s", msgs); err != nil {
		t.Fatal(err)
	}
	for _, m := range []imprint.Message{msgs[0], msgs[1], msgs[3]} {
		if _, err := single.AppendMessages(ctx, scope, "s", []imprint.Message{m}); err != nil {
			t.Fatal(err)
		}
	}
	// m3 answers m2 (Melanie), not m2's repeat (Zed): "Melanie" is left
	// out of its words, "Zed" is not.
	for _, q := range []string{"Melanie", "Caroline", "Zed"} {
		want := search(single, q)
		if got := search(batch, q); !slices.Equal(got, want) {
			t.Errorf("%q in one batch = %v, one by one %v", q, got, want)
		}
	}
	if got := search(single, "Melanie"); slices.Contains(got, "m3") {
		t.Errorf("Melanie (one by one) = %v: m3's form of address is indexed", got)
	}
}
