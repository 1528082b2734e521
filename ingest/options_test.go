package ingest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/importer"
)

// TestOptionsValidate: each bad flag is ErrInvalid naming the flag, and
// good options give the time zone's location.
func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	good := Options{Format: FormatAuto, TZ: "Europe/Amsterdam"}
	loc, err := good.Validate()
	if err != nil || loc.String() != "Europe/Amsterdam" {
		t.Fatalf("Validate() = %v, %v; want Europe/Amsterdam", loc, err)
	}
	for _, tt := range []struct {
		name string
		edit func(*Options)
		flag string
	}{
		{"format", func(o *Options) { o.Format = "word" }, "--format"},
		{"tz", func(o *Options) { o.TZ = "Mars/Olympus" }, "--tz"},
		{"max llm calls", func(o *Options) { o.MaxLLMCalls = -1 }, "--max-llm-calls"},
		{"workspace", func(o *Options) { o.Workspace = "bad\nworkspace" }, "--workspace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := good
			tt.edit(&o)
			_, err := o.Validate()
			if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), tt.flag) {
				t.Errorf("Validate() = %v, want ErrInvalid naming %s", err, tt.flag)
			}
		})
	}
}

// TestOptionsRestores: only imprint exports are restored, never mixed
// with transcripts nor on a dry run, and not when another format is named.
func TestOptionsRestores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	export := filepath.Join(dir, "export.jsonl")
	head, err := json.Marshal(curate.ExportLine{Kind: curate.LineHeader, Format: curate.ExportFormat})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(export, append(head, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(dir, "chat.jsonl")
	if err := os.WriteFile(transcript, []byte(`{"type":"user","message":{"role":"user","content":"hi"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		o       Options
		paths   []string
		restore bool
		invalid bool
	}{
		{"transcript", Options{Format: FormatAuto}, []string{transcript}, false, false},
		{"export", Options{Format: FormatAuto}, []string{export}, true, false},
		{"export as imprint", Options{Format: importer.FormatImprint}, []string{export}, true, false},
		{"other format named", Options{Format: importer.FormatClaudeCode}, []string{export}, false, false},
		{"mixed", Options{Format: FormatAuto}, []string{export, transcript}, true, true},
		{"dry run", Options{Format: FormatAuto, DryRun: true}, []string{export}, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			restore, err := tt.o.Restores(tt.paths)
			if restore != tt.restore || errors.Is(err, imprint.ErrInvalid) != tt.invalid || (err != nil && !tt.invalid) {
				t.Errorf("Restores() = %v, %v; want %v, invalid %v", restore, err, tt.restore, tt.invalid)
			}
		})
	}
}

// TestSummaryComplete: the sources' warnings come first, the LLM usage of
// every op is summed, and warnings print as a list even when there are none.
func TestSummaryComplete(t *testing.T) {
	t.Parallel()
	s := &Summary{Warnings: []importer.Warning{{File: "b", Message: "run"}}}
	s.Complete([]importer.Warning{{File: "a", Message: "source"}}, true, map[string]imprint.LLMUsage{
		"capture.alpha": {Calls: 2, PromptTokens: 100, CompletionTokens: 10},
		"extract":       {Calls: 1, PromptTokens: 50, CompletionTokens: 5},
	})
	want := &Summary{Warnings: []importer.Warning{{File: "a", Message: "source"}, {File: "b", Message: "run"}},
		LLMConfigured: true, LLMCalls: 3, PromptTokens: 150, CompletionTokens: 15}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	empty := &Summary{}
	empty.Complete(nil, false, nil)
	if b, _ := json.Marshal(empty); !strings.Contains(string(b), `"warnings":[]`) {
		t.Errorf("summary JSON %s: want an empty warnings list", b)
	}
}

// TestJobWorkers: one worker without an LLM (CPU work), else twice the
// LLM's concurrency (at least two).
func TestJobWorkers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		llm  bool
		conc int
		want int
	}{{false, 8, 1}, {true, 1, 4}, {true, 4, 8}, {true, 6, 12}} {
		if got := JobWorkers(tt.llm, tt.conc); got != tt.want {
			t.Errorf("JobWorkers(%v, %d) = %d, want %d", tt.llm, tt.conc, got, tt.want)
		}
	}
}
