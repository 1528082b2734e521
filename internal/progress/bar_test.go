package progress

import (
	"bytes"
	"io"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// barRe matches the counts the bar shows.
var barRe = regexp.MustCompile(`files (\d+)/(\d+) · messages (\d+) · episodes (\d+) · memories (\d+)`)

// TestBarShowsCounts draws the bar unthrottled and checks each drawing
// shows the counts given so far.
func TestBarShowsCounts(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	bar := New(&buf, 3, 0)
	bar.Update(18, 0)
	bar.Episodes(4)
	bar.Memories(2)
	bar.Memories(3)
	bar.Advance(25, 0)
	bar.Finish()
	var got []string
	for _, s := range barRe.FindAllString(buf.String(), -1) {
		if len(got) == 0 || got[len(got)-1] != s {
			got = append(got, s)
		}
	}
	want := []string{
		"files 0/3 · messages 18 · episodes 0 · memories 0",
		"files 0/3 · messages 18 · episodes 4 · memories 0",
		"files 0/3 · messages 18 · episodes 4 · memories 2",
		"files 0/3 · messages 18 · episodes 4 · memories 5",
		"files 1/3 · messages 25 · episodes 4 · memories 5",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bar drawings (-want +got):\n%s\nraw %q", diff, buf.String())
	}
	// A bar for no terminal draws nothing and does not fail.
	var none Bar
	none.Update(1, 0)
	none.Episodes(1)
	none.Memories(1)
	none.Advance(0, 0)
	none.Finish()
}

// TestForTerminal: a bar is drawn only on a writer the check calls a
// terminal; a buffer is none by the real check.
func TestForTerminal(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	for _, b := range []*Bar{ForTerminal(&buf, 2, nil), ForTerminal(&buf, 2, func(io.Writer) bool { return false })} {
		b.Update(3, 1)
		b.Advance(3, 1)
		b.Finish()
	}
	if buf.Len() != 0 {
		t.Errorf("no terminal, but drawn: %q", buf.String())
	}
	b := ForTerminal(&buf, 2, func(io.Writer) bool { return true })
	b.Advance(3, 1)
	b.Finish()
	if !barRe.MatchString(buf.String()) {
		t.Errorf("terminal, but no bar drawn: %q", buf.String())
	}
}
