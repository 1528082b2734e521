package curate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
)

// TestExportFileRestoreFiles: an export written to a file restores from
// it with the same counts, two files add up, and a file that cannot be
// written or read is a bad input that leaves nothing behind.
func TestExportFileRestoreFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	e.importLoCoMo()
	get(e.m.Remember(ctx, imprint.RememberRequest{Scope: e.scope, Content: "Ada keeps bees"}))(t)
	out := filepath.Join(t.TempDir(), "export.jsonl")
	st := get(ExportFile(ctx, e.db, e.scope, ExportOptions{}, out))(t)
	if st.Memories == 0 || !IsExport(out) {
		t.Fatalf("ExportFile = %+v, IsExport %v; want memories in an export", st, IsExport(out))
	}
	if n := CountExports([]string{out, filepath.Join(e.dir, "imprint.db")}); n != 1 {
		t.Errorf("CountExports = %d, want 1", n)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("the export's dir holds %d files, want only the export", len(entries))
	}

	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "x.jsonl")
	if _, err := ExportFile(ctx, e.db, e.scope, ExportOptions{}, missing); !isInvalid(err) {
		t.Errorf("ExportFile into a missing dir: %v, want ErrInvalid", err)
	}

	fresh := openEnv(t, t.TempDir())
	d := RestoreDeps{Store: fresh.db, Embedder: embedding.NewHash(), Records: fresh.records, Conversations: fresh.conv}
	if _, err := RestoreFiles(ctx, d, []string{missing}); !isInvalid(err) {
		t.Errorf("RestoreFiles of a missing file: %v, want ErrInvalid", err)
	}
	rst := get(RestoreFiles(ctx, d, []string{out}))(t)
	if rst != st {
		t.Errorf("RestoreFiles = %+v, want the export's %+v", rst, st)
	}
	if got := st.String(); !strings.HasSuffix(got, fmt.Sprintf("%d traces", st.Traces)) || !strings.Contains(got, fmt.Sprintf("%d memories", st.Memories)) {
		t.Errorf("ExportStats.String() = %q", got)
	}
}
