package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

func TestOpenRejectsEmptyPath(t *testing.T) {
	t.Parallel()
	_, err := Open(t.Context(), " ")
	if !errors.Is(err, imprint.ErrInvalid) {
		t.Errorf("Open(\" \") error %v, want ErrInvalid", err)
	}
}

func TestMigrationsAppliedOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "imprint.db")
	want, err := migrationNames()
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open #%d: %v", round, err)
		}
		var n int
		if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != len(want) {
			t.Errorf("open #%d: %d migrations recorded, want %d", round, n, len(want))
		}
		if round == 0 {
			if _, err := db.AppendMessages(ctx, imprint.DefaultScope(), "s", []imprint.Message{{ID: "m", Role: imprint.RoleUser, Content: "kept across reopen"}}); err != nil {
				t.Fatal(err)
			}
		}
		m, err := db.GetMessage(ctx, imprint.DefaultScope(), "s", "m")
		if err != nil || m.Content != "kept across reopen" {
			t.Errorf("open #%d: message %q, %v", round, m.Content, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

type queryRower interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func TestPragmas(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	defer db.Close()
	ctx := t.Context()
	for _, tc := range []struct{ pragma, want string }{
		{"journal_mode", "wal"},
		{"busy_timeout", "5000"},
		{"foreign_keys", "1"},
		{"synchronous", "1"}, // NORMAL
	} {
		for pool, q := range map[string]queryRower{"write": db.w, "read": db.r} {
			var got string
			if err := q.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
				t.Fatalf("%s pool PRAGMA %s: %v", pool, tc.pragma, err)
			}
			if strings.ToLower(got) != tc.want {
				t.Errorf("%s pool PRAGMA %s = %q, want %q", pool, tc.pragma, got, tc.want)
			}
		}
	}
	// The read pool cannot write.
	if _, err := db.r.ExecContext(ctx, `INSERT INTO llm_calls (op, at) VALUES ('x', '')`); err == nil {
		t.Error("read pool accepted a write")
	}
}

// TestIndexedLookups checks with EXPLAIN QUERY PLAN that the statements on
// the write path and the scoped lookups use indexes, never a table scan.
func TestIndexedLookups(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	defer db.Close()
	sc := scopeWhere("")
	for _, q := range []string{
		`SELECT * FROM messages WHERE ` + sc + ` AND session_id = 's' AND id = 'm'`,
		`SELECT * FROM messages WHERE ` + sc + ` AND session_id = 's' AND seq > 5 ORDER BY seq LIMIT 10`,
		`SELECT * FROM messages WHERE ` + sc + ` AND session_id = 's' AND seq < 5 ORDER BY seq DESC LIMIT 10`,
		`SELECT COUNT(*) FROM messages WHERE ` + sc + ` AND session_id = 's' AND seq > 3`,
		`UPDATE messages SET vec = x'00' WHERE ` + sc + ` AND session_id = 's' AND id = 'm' AND vec IS NULL`,
		`SELECT * FROM sessions WHERE ` + sc + ` AND id = 's'`,
		`UPDATE sessions SET extraction_due = 1 WHERE ` + sc + ` AND id = 's'`,
		`SELECT * FROM episodes WHERE id = 'e'`,
		strings.Replace(episodesByIDSQL, "?", `'["e","f"]'`, 1),
		`SELECT rid, step_key FROM traces WHERE episode_id = 'e'`,
		`SELECT * FROM traces WHERE id = 't' AND ` + sc,
		`SELECT * FROM traces WHERE ` + sc + ` AND episode_id = 'e' ORDER BY step_index`,
		`SELECT rid FROM memories WHERE id = 'm'`,
		`SELECT * FROM memories WHERE ` + sc + ` AND content_hash = 'h' AND superseded_by IS NULL`,
		`SELECT * FROM memories WHERE ` + sc + ` ORDER BY updated_at DESC LIMIT 10`,
		`SELECT COUNT(*) FROM memories WHERE ` + sc + ` AND superseded_by IS NULL`,
		`SELECT id FROM memories WHERE superseded_by = 'm'`,
		`SELECT * FROM llm_calls WHERE at >= '2026'`,
	} {
		rows, err := db.r.QueryContext(t.Context(), `EXPLAIN QUERY PLAN `+q, scopeArgs(imprint.DefaultScope())...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			// A scan of json_each reads the list of keys asked for.
			if strings.HasPrefix(step, "SCAN ") && !strings.HasPrefix(step, "SCAN json_each VIRTUAL TABLE") {
				t.Errorf("%s\n  scans a table: %v", q, plan)
			}
		}
	}
}
