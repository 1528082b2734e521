package ingest

import (
	"fmt"
	"io"
	"strings"
)

// maxTextWarnings is how many warnings WriteText lists; --json has them all.
const maxTextWarnings = 20

// WriteText writes the summary as imprint import prints it without --json:
// what the import did, or for a dry run what it would do (in the future
// tense: nothing was written), then the first warnings.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	if s.DryRun {
		s.writeDryRun(&b)
	} else {
		fmt.Fprintf(&b, "files %d, transcripts %d\n", s.Files, s.Transcripts)
		fmt.Fprintf(&b, "messages: %d recorded, %d skipped (already recorded or empty)\n", s.MessagesRecorded, s.MessagesSkipped)
		fmt.Fprintf(&b, "episodes: %d captured into %d traces, %d unchanged\n", s.Episodes, s.Traces, s.EpisodesSkipped)
		fmt.Fprintf(&b, "memories: %d stored, %d updated, %d merged, %d skipped as duplicates\n", s.Memories.Store, s.Memories.Update, s.Memories.Merge, s.Memories.Skip)
		fmt.Fprintf(&b, "LLM: %d calls, %d prompt + %d completion tokens", s.LLMCalls, s.PromptTokens, s.CompletionTokens)
		if !s.LLMConfigured {
			b.WriteString(" (no LLM configured: heuristic extraction, neutral α)")
		}
		b.WriteString("\n")
	}
	if s.LLMBudgetReached {
		fmt.Fprintf(&b, "stopped at the LLM budget: %d episodes not captured and %d messages not extracted yet; run the same import again to resume\n",
			s.EpisodesLeft, s.PendingMessages)
	}
	for i, wn := range s.Warnings {
		if i == maxTextWarnings {
			fmt.Fprintf(&b, "… and %d more warnings (see --json)\n", len(s.Warnings)-maxTextWarnings)
			break
		}
		loc := wn.File
		if wn.Line > 0 {
			loc = fmt.Sprintf("%s:%d", wn.File, wn.Line)
		}
		fmt.Fprintf(&b, "warning: %s: %s\n", loc, wn.Message)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// writeDryRun says what the import would do.
func (s *Summary) writeDryRun(b *strings.Builder) {
	b.WriteString("dry run: nothing was written. The import would:\n")
	fmt.Fprintf(b, "  read %s holding %s\n", plural(s.Files, "file"), plural(s.Transcripts, "transcript"))
	fmt.Fprintf(b, "  record %s and skip %d (already in the store, or empty)\n", plural(s.MessagesRecorded, "message"), s.MessagesSkipped)
	fmt.Fprintf(b, "  capture %s into traces and leave %d unchanged\n", plural(s.Episodes, "episode"), s.EpisodesSkipped)
	switch {
	case s.EstimatedLLMCalls == nil:
	case s.LLMConfigured:
		fmt.Fprintf(b, "  make about %s with about %d prompt tokens\n", plural(*s.EstimatedLLMCalls, "LLM call"), *s.EstimatedPromptTokens)
	default:
		fmt.Fprintf(b, "  extract with the heuristic extractor and score with neutral α (no LLM configured); with an LLM it would make about %s with about %d prompt tokens\n",
			plural(*s.EstimatedLLMCalls, "LLM call"), *s.EstimatedPromptTokens)
	}
}

// plural is "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
