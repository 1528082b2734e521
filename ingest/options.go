package ingest

import (
	"slices"
	"strings"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/importer"
)

// Options are the choices of one imprint import (its flags) and what it
// tells its user.
type Options struct {
	// Format is one of Formats ("auto" sniffs each file).
	Format    string
	NoExtract bool
	NoCapture bool
	DryRun    bool
	// TZ is the time zone of zone-less dates (LoCoMo).
	TZ string
	// MaxLLMCalls stops the import cleanly after this many LLM calls (0:
	// no limit); NoWait fails instead of waiting for the import lock.
	MaxLLMCalls int
	NoWait      bool
	// Workspace, when set, is the workspace of every imported record.
	Workspace string
	// Scope is the scope of the records; with SourceAgents each source's
	// default agent replaces its agent (importer.DefaultAgent).
	Scope        imprint.Scope
	SourceAgents bool
	// Waiting is told when another import holds the lock (nil: nothing).
	Waiting func(path, holder string)
	// Progress returns the bar over the import's files (nil: none).
	Progress func(files int) Bar
}

// Validate checks the options as their flags name them and returns the
// location of TZ. ErrInvalid for an unknown format or time zone, a
// negative --max-llm-calls or an invalid --workspace.
func (o Options) Validate() (*time.Location, error) {
	if !slices.Contains(Formats, o.Format) {
		return nil, imprint.Invalidf("--format %q: want one of %s", o.Format, strings.Join(Formats, ", "))
	}
	loc, err := time.LoadLocation(o.TZ)
	if err != nil {
		return nil, imprint.Invalidf("--tz %q: %v", o.TZ, err)
	}
	if o.MaxLLMCalls < 0 {
		return nil, imprint.Invalidf("--max-llm-calls %d: want 0 (no limit) or more", o.MaxLLMCalls)
	}
	if err := imprint.ValidateWorkspace("--workspace", o.Workspace); err != nil {
		return nil, err
	}
	return loc, nil
}

// Restores reports whether an import of paths with these options is the
// restore of imprint exports (imprint export) rather than an import of
// transcripts: every path is an export and the format is imprint or auto.
// ErrInvalid for a mix of exports and transcripts, and for --dry-run of a
// restore.
func (o Options) Restores(paths []string) (bool, error) {
	if o.Format != importer.FormatImprint && o.Format != FormatAuto {
		return false, nil
	}
	switch c := curate.CountExports(paths); {
	case c == 0:
		return false, nil
	case c < len(paths):
		return true, imprint.Invalidf("import: give imprint exports and transcripts in separate imports")
	case o.DryRun:
		return true, imprint.Invalidf("import: --dry-run does not apply to restoring an export")
	}
	return true, nil
}

// Complete adds to s what the import learnt outside its run: the warnings
// of collecting its sources (listed first), whether an LLM was configured,
// and the LLM calls and tokens of usage (by op) summed. Warnings is never
// nil afterwards, so --json prints a list.
func (s *Summary) Complete(sourceWarnings []importer.Warning, llmConfigured bool, usage map[string]imprint.LLMUsage) {
	s.Warnings = append(slices.Clip(sourceWarnings), s.Warnings...)
	s.LLMConfigured = llmConfigured
	for _, u := range usage {
		s.LLMCalls += u.Calls
		s.PromptTokens += u.PromptTokens
		s.CompletionTokens += u.CompletionTokens
	}
	if s.Warnings == nil {
		s.Warnings = []importer.Warning{}
	}
}
