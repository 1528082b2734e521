package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint/eval"
)

// TestEvalLoCoMo runs imprint eval locomo on the eval package's hand-made
// file: the import goes through imprint import (messages, traces, the
// hash embedder, no LLM) into a temporary folder, never the data dir, and
// every method is reported beside the baseline, whose figures follow from
// the file's words.
func TestEvalLoCoMo(t *testing.T) {
	t.Parallel()
	file := repoFile(t, "eval/testdata/locomo-tiny.json")
	dataDir := filepath.Join(t.TempDir(), "data")
	r := runImprint(t, nil, "eval", "locomo", "--json", "--data-dir", dataDir, file)
	if r.code != 0 {
		t.Fatalf("eval exit %d: %s", r.code, r.stderr)
	}
	var rep eval.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report %q: %v", r.stdout, err)
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the data dir was touched: %v", err)
	}
	im := rep.Imported
	if im.Messages != 8 || im.Episodes != 2 || im.Traces == 0 || im.Extractor != "heuristic" || im.Embedder != "hash/384" {
		t.Errorf("imported %+v: want 8 messages, 2 episodes, traces, heuristic extraction, hash/384", im)
	}
	var names []string
	byName := map[string]eval.MethodResult{}
	for _, m := range rep.Methods {
		names = append(names, m.Name)
		byName[m.Name] = m
	}
	want := []string{eval.MethodBM25, eval.MethodMessage, eval.MethodMessageKeywords, eval.MethodMemory, eval.MethodAll, eval.MethodRecall}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("methods (-want +got):\n%s", diff)
	}
	if rep.Evaluated != 5 || len(rep.Questions) != 5 {
		t.Errorf("evaluated %d questions, want 5", rep.Evaluated)
	}
	if got := byName[eval.MethodBM25].Overall; got.At1 != 0.6 || got.At5 != 0.8 || got.At10 != 0.8 {
		t.Errorf("bm25 %+v, want 0.6 / 0.8 / 0.8", got)
	}
	// The questions name the words of their evidence turns: message search
	// over the imported store finds some of them.
	if got := byName[eval.MethodMessage].Overall.At10; got == 0 {
		t.Errorf("message search found no evidence at all")
	}

	text := runImprint(t, nil, "eval", "locomo", "--data-dir", dataDir, file)
	if text.code != 0 {
		t.Fatalf("eval exit %d: %s", text.code, text.stderr)
	}
	for _, s := range []string{"bm25              @1", "recall            @1", "                  block", "vs bm25", "p95 ms"} {
		if !strings.Contains(text.stdout, s) {
			t.Errorf("table has no %q:\n%s", s, text.stdout)
		}
	}
}

func TestEvalLoCoMoBadInput(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"missing file": {filepath.Join(t.TempDir(), "none.json")},
		"not json":     {writeTemp(t, "bad.json", "not json at all")},
		"no questions": {writeTemp(t, "noqa.json", `[{"sample_id": "x", "conversation": {"speaker_a": "A", "speaker_b": "B",
			"session_1_date_time": "1:00 pm on 8 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi there"}]}}]`)},
		"no file": {},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runImprint(t, nil, append([]string{"eval", "locomo", "--data-dir", t.TempDir()}, args...)...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2: %s", r.code, r.stderr)
			}
		})
	}
}
