package sqlite

import (
	"context"
	"path/filepath"
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
