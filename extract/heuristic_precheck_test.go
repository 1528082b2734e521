package extract

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
)

// precheckTexts returns every message of the shared LoCoMo, τ-bench and
// Claude Code test data plus hand-made sentences that sit on the edges of
// the pre-check (anchored starts, words glued to punctuation, letters that
// case-fold onto ASCII).
func precheckTexts(tb testing.TB) []string {
	tb.Helper()
	var texts []string
	for _, tr := range benchReadLoCoMo(tb) {
		for _, m := range tr.Messages {
			texts = append(texts, m.Content)
		}
	}
	path := filepath.Join(benchSharedDir(tb), "tau-bench", "airline-40.json")
	f, err := os.Open(path)
	if err != nil {
		tb.Fatalf("τ-bench testdata: %v", err)
	}
	defer f.Close()
	trs, err := importer.ReadTauBench(f, path)
	if err != nil {
		tb.Fatal(err)
	}
	cc, _, err := importer.ReadClaudeCodeDir(filepath.Join(benchSharedDir(tb), "claude-code"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, tr := range append(trs, cc...) {
		for _, m := range tr.Messages {
			texts = append(texts, m.Content)
		}
	}
	return append(texts,
		"Always answer in French, thanks.",
		"Please never use tabs in my code.",
		"Stop sending emails again",
		"Don't ever call after nine.",
		"From now on reply briefly, okay.",
		"Just got back from a long trip to Peru.",
		"Went hiking up the mountain on Sunday.",
		"Yoga is a big passion of mine these days.",
		"Running helps me clear my head.",
		"The weather has been lovely all week long.",
		"éI am a teacher at the local school.",
		"(I moved to Berlin last year.)",
		"ſtop using jargon in replies again",
		"\u212aeep in mind that the deadline is Friday.",
		"Call me Sam from now on please.",
	)
}

// TestEnglishPrecheckChangesNothing runs every sentence of the shared test
// data through the English patterns with and without the keyword
// pre-check: the pre-check may only skip sentences no pattern matches.
func TestEnglishPrecheckChangesNothing(t *testing.T) {
	t.Parallel()
	ts := time.Date(2024, 5, 8, 13, 56, 0, 0, time.UTC)
	checked, skipped := 0, 0
	for _, text := range precheckTexts(t) {
		for _, s := range splitSentences(text) {
			if s.question || hasCJK(s.text) {
				continue
			}
			clean, ok := englishClean(s.text)
			if !ok {
				continue
			}
			checked++
			if enMayMatch(clean) {
				continue
			}
			skipped++
			if c, ok := englishPatterns(clean, ts); ok {
				t.Errorf("pre-check skips %q, which yields %+v", clean, c)
			}
		}
	}
	if checked < 1000 || skipped == 0 {
		t.Fatalf("checked %d sentences, skipped %d: the test data did not exercise the pre-check", checked, skipped)
	}
	t.Logf("%d sentences reach the patterns, the pre-check skips %d", checked, skipped)
}

// BenchmarkHeuristicTestdata runs Heuristic over every user message of the
// shared test data, ten messages per call as extraction windows are.
func BenchmarkHeuristicTestdata(b *testing.B) {
	var msgs []imprint.Message
	at := imprint.At(time.Date(2024, 5, 8, 13, 56, 0, 0, time.UTC))
	for i, text := range precheckTexts(b) {
		msgs = append(msgs, imprint.Message{ID: imprint.NewID(), Role: imprint.RoleUser, Content: text, Timestamp: at, Seq: int64(i)})
	}
	b.ResetTimer()
	for b.Loop() {
		for lo := 0; lo < len(msgs); lo += 10 {
			Heuristic(msgs[lo:min(lo+10, len(msgs))])
		}
	}
	b.ReportMetric(float64(len(msgs)*b.N)/b.Elapsed().Seconds(), "messages/s")
}
