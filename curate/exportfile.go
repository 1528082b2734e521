package curate

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	imprint "github.com/imprint-dev/imprint"
)

// ExportFile writes the export to the file out as Export does, through a
// temporary file beside it renamed at the end, so a failed export never
// leaves half a file under its name. A file that cannot be created there
// is ErrInvalid.
func ExportFile(ctx context.Context, st imprint.Store, scope imprint.Scope, o ExportOptions, out string) (ExportStats, error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return ExportStats{}, imprint.Invalidf("--out %s: %v", out, err)
	}
	defer os.Remove(tmp.Name())
	stats, err := Export(ctx, st, scope, o, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	return stats, err
}

// RestoreFiles restores the exports at paths, one after the other, and
// returns what they held in all. A file that cannot be opened is
// ErrInvalid.
func RestoreFiles(ctx context.Context, d RestoreDeps, paths []string) (ExportStats, error) {
	var total ExportStats
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return total, imprint.Invalidf("import %s: %v", p, err)
		}
		stats, err := Restore(ctx, d, f)
		f.Close()
		if err != nil {
			return total, fmt.Errorf("restore %s: %w", p, err)
		}
		total.Sessions += stats.Sessions
		total.Messages += stats.Messages
		total.Memories += stats.Memories
		total.Episodes += stats.Episodes
		total.Traces += stats.Traces
	}
	return total, nil
}

// CountExports reports how many of paths are imprint exports (IsExport).
func CountExports(paths []string) int {
	n := 0
	for _, p := range paths {
		if IsExport(p) {
			n++
		}
	}
	return n
}

// String is "N sessions, N messages, N memories, N episodes, N traces".
func (s ExportStats) String() string {
	return fmt.Sprintf("%d sessions, %d messages, %d memories, %d episodes, %d traces",
		s.Sessions, s.Messages, s.Memories, s.Episodes, s.Traces)
}

// WriteText writes what a restore did, as imprint import prints it.
func (s ExportStats) WriteText(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "restored %s\n", s); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// RebuildResult is what imprint rebuild did: what the shards gave, and
// whether the episodes, traces and keys were carried over from the
// previous database, kept as Backup.
type RebuildResult struct {
	Rebuilt     ExportStats `json:"rebuilt"`
	CarriedOver bool        `json:"carried_over"`
	Backup      string      `json:"-"`
}

// WriteText writes what a rebuild did, as imprint rebuild prints it.
func (r RebuildResult) WriteText(w io.Writer) error {
	s := fmt.Sprintf("rebuilt %d sessions, %d messages and %d memories from the shards", r.Rebuilt.Sessions, r.Rebuilt.Messages, r.Rebuilt.Memories)
	if r.CarriedOver {
		s += "; episodes, traces and keys carried over; the previous database is " + r.Backup
	}
	if _, err := io.WriteString(w, s+"\n"); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
