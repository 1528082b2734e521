package heuristic

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/internal/testfiles"
)

var update = flag.Bool("update", false, "rewrite testdata/extract_golden.jsonl from the extractor's output")

// goldenCase is a window of messages given to the extractor.
type goldenCase struct {
	name   string
	people bool
	msgs   []imprint.Message
}

// goldenLine is one candidate of testdata/extract_golden.jsonl: the case
// it came from and the candidate, its source named by the message's index
// in the case's window.
type goldenLine struct {
	Case      string                 `json:"case"`
	Content   string                 `json:"content"`
	Type      imprint.MemoryType     `json:"type"`
	Priority  int                    `json:"priority"`
	Scene     string                 `json:"scene"`
	Sources   []int                  `json:"sources"`
	Metadata  imprint.MemoryMetadata `json:"metadata"`
	Candidate int                    `json:"n"`
}

// goldenCases are the extraction windows of every transcript of the
// shared test data (ten messages each, in both modes), every labelled
// sentence and LoCoMo gold message alone (in both modes), and the
// hand-made edge sentences of precheckTexts.
func goldenCases(tb testing.TB) []goldenCase {
	tb.Helper()
	var trs []importer.Transcript
	read := func(rel string, f func(io.Reader, string) ([]importer.Transcript, error)) {
		path := filepath.Join(testfiles.Dir(), rel)
		fh, err := os.Open(path)
		if err != nil {
			tb.Fatalf("testdata: %v", err)
		}
		defer fh.Close()
		got, err := f(fh, path)
		if err != nil {
			tb.Fatal(err)
		}
		trs = append(trs, got...)
	}
	read("locomo/locomo-2conv.json", func(f io.Reader, p string) ([]importer.Transcript, error) { return importer.ReadLoCoMo(f, p, nil) })
	read("tau-bench/airline-40.json", importer.ReadTauBench)
	cc, _, err := importer.ReadClaudeCodeDir(filepath.Join(testfiles.Dir(), "claude-code"))
	if err != nil {
		tb.Fatal(err)
	}
	trs = append(trs, cc...)
	var cases []goldenCase
	for ti, tr := range trs {
		for lo := 0; lo < len(tr.Messages); lo += 10 {
			w := tr.Messages[lo:min(lo+10, len(tr.Messages))]
			for _, people := range []bool{false, true} {
				cases = append(cases, goldenCase{name: fmt.Sprintf("transcript %d %s [%d:%d] people=%v", ti, tr.SessionID, lo, lo+len(w), people), people: people, msgs: w})
			}
		}
	}
	at := imprint.At(time.Date(2024, 5, 8, 13, 56, 0, 0, time.UTC))
	one := func(name string, m imprint.Message) {
		for _, people := range []bool{false, true} {
			cases = append(cases, goldenCase{name: fmt.Sprintf("%s people=%v", name, people), people: people, msgs: []imprint.Message{m}})
		}
	}
	for _, file := range []string{"heuristic_labels.jsonl", "heuristic_labels_heldout.jsonl"} {
		for i, l := range readLabels(tb, file) {
			one(fmt.Sprintf("%s:%d", file, i+1), imprint.Message{ID: "m", Role: l.Role, Speaker: l.Speaker, Content: l.Text, Timestamp: at})
		}
	}
	for _, file := range []string{"locomo_gold.jsonl", "locomo_heldout.jsonl"} {
		for i, g := range readJSONLines[goldItem](tb, filepath.Join("testdata", "gold", file)) {
			one(fmt.Sprintf("%s:%d", file, i+1), imprint.Message{ID: "m", Role: imprint.RoleUser, Speaker: g.Speaker, Content: g.Text, Timestamp: at})
		}
	}
	for i, text := range precheckTexts(tb) {
		one(fmt.Sprintf("text %d", i), imprint.Message{ID: "m", Role: imprint.RoleUser, Content: text, Timestamp: at})
	}
	return cases
}

// goldenOutput runs the extractor over cases and writes its candidates as
// JSON lines.
func goldenOutput(tb testing.TB, cases []goldenCase) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, c := range cases {
		var cs []imprint.Candidate
		if c.people {
			cs = ExtractBetweenPeople(c.msgs)
		} else {
			cs = Extract(c.msgs)
		}
		for n, cand := range cs {
			line := goldenLine{Case: c.name, Content: cand.Content, Type: cand.Type, Priority: cand.Priority,
				Scene: cand.SceneName, Metadata: cand.Metadata, Candidate: n}
			for _, id := range cand.SourceMessageIDs {
				idx := -1
				for i, m := range c.msgs {
					if m.ID == id {
						idx = i
						break
					}
				}
				line.Sources = append(line.Sources, idx)
			}
			if err := enc.Encode(line); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return buf.Bytes()
}

// TestExtractGolden runs the extractor over every transcript window,
// labelled sentence and edge sentence of the test data (goldenCases) and
// compares every candidate (content, type, priority, scene, metadata,
// sources, order) with testdata/extract_golden.jsonl, written by the
// extractor before its speed-ups: a change to the extractor's patterns
// or their pre-checks that changes any memory fails here. Run with
// -update after an intended change of its output.
func TestExtractGolden(t *testing.T) {
	t.Parallel()
	cases := goldenCases(t)
	got := goldenOutput(t, cases)
	path := filepath.Join("testdata", "extract_golden.jsonl")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		n := bytes.Count(got, []byte("\n"))
		if len(cases) < 3000 || n < 1000 {
			t.Fatalf("%d cases, %d candidates: the test data did not exercise the extractor", len(cases), n)
		}
		t.Logf("%d cases, %d candidates, all as in the golden file", len(cases), n)
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("line %d differs from %s (%d lines now, %d there):\n got %s\nwant %s", i+1, path, len(gl), len(wl), g, w)
		}
	}
}

// BenchmarkExtractGolden runs the extractor over the golden cases: every
// transcript window of the test data in both modes and every labelled
// and edge sentence alone.
func BenchmarkExtractGolden(b *testing.B) {
	cases := goldenCases(b)
	msgs := 0
	for _, c := range cases {
		msgs += len(c.msgs)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range cases {
			if c.people {
				ExtractBetweenPeople(c.msgs)
			} else {
				Extract(c.msgs)
			}
		}
	}
	b.ReportMetric(float64(msgs*b.N)/b.Elapsed().Seconds(), "messages/s")
}
