package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/storetest"
)

// FuzzQueryBuilder sends arbitrary text through the keyword query builder
// and real MATCH queries on a small database: no input may produce an SQL or
// FTS syntax error, or a panic.
func FuzzQueryBuilder(f *testing.F) {
	for _, q := range storetest.HostileQueries {
		f.Add(q)
	}
	for _, q := range []string{"北京", "向量数据库", "coffee tea", "東京タワー", "AI", `NEAR("a" "b")`, "x\x00y"} {
		f.Add(q)
	}
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	sc := imprint.DefaultScope()
	if _, err := db.AppendMessages(ctx, sc, "s", []imprint.Message{
		{ID: "1", Role: imprint.RoleUser, Content: `我们在北京讨论向量数据库 "coffee" OR tea NEAR(x) *`},
		{ID: "2", Role: imprint.RoleAssistant, Content: "AI is fine, 東京タワー too"},
	}); err != nil {
		f.Fatal(err)
	}
	if err := db.PutMemory(ctx, imprint.Memory{ID: "m", Content: "User likes coffee in 北京", Type: imprint.MemoryPersona, Scope: sc}, nil); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		q := buildQuery(text)
		for _, part := range []struct{ table, expr string }{{"message_fts", q.trigram}, {"message_words", q.words}} {
			if part.expr == "" {
				continue
			}
			rows, err := db.r.QueryContext(ctx, `SELECT rowid FROM `+part.table+` WHERE `+part.table+` MATCH ?`, part.expr)
			if err != nil {
				t.Fatalf("MATCH %q (from %q): %v", part.expr, text, err)
			}
			for rows.Next() {
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("MATCH %q (from %q): %v", part.expr, text, err)
			}
			rows.Close()
		}
		for _, k := range []imprint.Kind{imprint.KindMessage, imprint.KindMemory} {
			if _, err := db.SearchText(ctx, imprint.TextQuery{Scope: sc, Kind: k, Text: text}); err != nil {
				t.Fatalf("SearchText(%s, %q): %v", k, text, err)
			}
		}
	})
}
