package shard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/fsync"
)

// Writer appends lines to the day files of one folder. It is safe for
// concurrent use; each Append is written and synced before it returns.
type Writer struct {
	dir string
	// mu is shared by every Writer of the same folder in the process, so
	// a Rewrite (a purge) and the Appends of another Writer (extraction's)
	// never interleave.
	mu      *sync.Mutex
	journal *Journal
}

// dirLocks holds the mutex of each folder a Writer was made for.
var dirLocks sync.Map

func dirLock(dir string) *sync.Mutex {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	mu, _ := dirLocks.LoadOrStore(filepath.Clean(dir), &sync.Mutex{})
	return mu.(*sync.Mutex)
}

var _ imprint.RecordLog = (*Writer)(nil)

// NewWriter returns a Writer for dir, creating the folder if needed.
func NewWriter(dir string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create shard dir: %w", err)
	}
	return &Writer{dir: dir, mu: dirLock(dir)}, nil
}

// Dir returns the folder the writer appends to.
func (w *Writer) Dir() string { return w.dir }

// Append writes each value as one JSON line to the file of its day, given
// by day(i) for the i-th value. Lines of one call that fall on one day are
// written with a single write.
func (w *Writer) Append(values []any, day func(i int) time.Time) error {
	if len(values) == 0 {
		return nil
	}
	byFile := map[string][]byte{}
	var order []string
	for i, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode shard line: %w", err)
		}
		name := FileName(day(i))
		if _, ok := byFile[name]; !ok {
			order = append(order, name)
		}
		byFile[name] = append(append(byFile[name], b...), '\n')
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, name := range order {
		if err := appendFile(filepath.Join(w.dir, name), byFile[name]); err != nil {
			return err
		}
	}
	return nil
}

// appendFile appends data to the file at path and syncs it; when the file
// is new it syncs its folder too, so that the file's entry survives a crash
// along with the data.
func appendFile(path string, data []byte) error {
	created := false
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if errors.Is(err, os.ErrNotExist) {
		created = true
		f, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
	if err != nil {
		return fmt.Errorf("open shard: %w", err)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("append shard %s: %w", filepath.Base(path), err)
	}
	if created {
		if err := fsync.Dir(filepath.Dir(path)); err != nil {
			return fmt.Errorf("append shard %s: %w", filepath.Base(path), err)
		}
	}
	return nil
}

// FileName returns the day file name for t: YYYY-MM-DD.jsonl of its UTC date.
func FileName(t time.Time) string {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Format("2006-01-02") + ".jsonl"
}

// Files returns the day files of dir in date order.
func Files(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list shards: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Read calls fn with each line of the writer's day files, oldest file
// first; see Read.
func (w *Writer) Read(fn func(line []byte) error) error { return Read(w.dir, fn) }

// Dir is a log's folder read as a log (ReplayWith of a folder that is not
// written to).
type Dir string

// Read calls fn with each line of the day files of d; see Read.
func (d Dir) Read(fn func(line []byte) error) error { return Read(string(d), fn) }

// Read calls fn with each line of the day files of dir, oldest file first.
// A line that fn rejects stops the read with an error naming file and line.
func Read(dir string, fn func(line []byte) error) error {
	files, err := Files(dir)
	if err != nil {
		return err
	}
	for _, path := range files {
		if err := readFile(path, fn); err != nil {
			return err
		}
	}
	return nil
}

func readFile(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open shard: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			if ferr := fn(line); ferr != nil {
				return fmt.Errorf("%s:%d: %w", filepath.Base(path), n, ferr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read shard %s: %w", filepath.Base(path), err)
		}
	}
}

// WriteFileSync creates path with data, failing if it exists, and makes it
// durable: the file is synced, then the folder that holds it, so that once
// it returns the file survives a crash or power loss.
func WriteFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", filepath.Base(path), err)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return fsync.Dir(filepath.Dir(path))
}

// Rewrite keeps, in every day file of the writer's folder, the lines keep
// accepts; see imprint.LogRewriter. A file that loses lines is written
// anew beside it, synced and renamed over it, then the folder is synced,
// so a crash leaves either the old file or the new one. Appends of this
// Writer wait while it runs.
func (w *Writer) Rewrite(keep func(line []byte) bool) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	files, err := Files(w.dir)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, path := range files {
		n, err := rewriteFile(path, keep)
		if err != nil {
			return removed, err
		}
		removed += n
	}
	if removed > 0 {
		if err := fsync.Dir(w.dir); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// SupportsRewrite reports that a Writer's lines can be removed
// (imprint.LogRewriter).
func (w *Writer) SupportsRewrite() bool { return true }

var _ imprint.LogRewriter = (*Writer)(nil)

// rewriteFile replaces the file at path by the lines keep accepts, when it
// rejects any, and returns how many it rejected.
func rewriteFile(path string, keep func([]byte) bool) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read shard %s: %w", filepath.Base(path), err)
	}
	var out []byte
	removed := 0
	for rest := data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = nil
		}
		if len(strings.TrimSpace(string(line))) > 0 && !keep(line) {
			removed++
			continue
		}
		out = append(out, line...)
	}
	if removed == 0 {
		return 0, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".rewrite-*")
	if err != nil {
		return 0, fmt.Errorf("rewrite shard %s: %w", filepath.Base(path), err)
	}
	_, werr := tmp.Write(out)
	merr := tmp.Chmod(0o644)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, merr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return 0, fmt.Errorf("rewrite shard %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return 0, fmt.Errorf("rewrite shard %s: %w", filepath.Base(path), err)
	}
	return removed, nil
}
