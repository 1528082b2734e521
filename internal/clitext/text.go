package clitext

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// TimeLayout is how listings show a time: UTC, to the minute.
const TimeLayout = "2006-01-02 15:04"

// OneLine shortens s to at most n runes on one line (runs of white space
// become one space), ending with "…" when it was cut.
func OneLine(s string, n int) string {
	out := make([]rune, 0, n)
	space := false
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' || r == ' ' {
			if !space && len(out) > 0 {
				out = append(out, ' ')
			}
			space = true
			continue
		}
		space = false
		if len(out) >= n {
			return string(out) + "…"
		}
		out = append(out, r)
	}
	return string(out)
}

// Time formats t for a listing ("-" when zero).
func Time(t imprint.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(TimeLayout)
}

// OrDash returns s, or "-" when s is empty.
func OrDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// table is an aligned listing: a header row, then one row per record.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

// row writes one row; cells must not hold tabs or newlines (OneLine
// takes them out of free text).
func (t *table) row(cells ...string) {
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error {
	if err := t.tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// Version is what imprint --version prints: the module version and the
// VCS commit the binary was built from, as the Go toolchain recorded them
// (debug.ReadBuildInfo): "v0.3.0 (commit 1a2b3c4d5e6f, 2026-05-01T10:00:00Z)",
// "(devel)" for a build from a checkout, "+dirty" after the commit of a
// tree with uncommitted changes.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown: built without module information)"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return v + " (no vcs commit recorded)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	if t, err := time.Parse(time.RFC3339, at); err == nil {
		return fmt.Sprintf("%s (commit %s, %s)", v, rev, t.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s (commit %s)", v, rev)
}
