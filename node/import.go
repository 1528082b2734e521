package node

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/ingest"
)

// ImportOptions are the choices of one imprint import (its flags) and what
// it tells its user.
type ImportOptions struct {
	// Format is one of ingest.Formats ("auto" sniffs each file).
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
	Progress func(files int) ingest.Bar
}

// Import imports paths as imprint import does (ingest.Importer over the
// node's store, recorder and runners) and returns what it did, with the
// LLM calls and tokens it spent. ErrInvalid for a bad option or an
// unreadable path.
func (n *Node) Import(ctx context.Context, o ImportOptions, paths []string) (*ingest.Summary, error) {
	if !slices.Contains(ingest.Formats, o.Format) {
		return nil, imprint.Invalidf("--format %q: want one of %s", o.Format, strings.Join(ingest.Formats, ", "))
	}
	loc, err := time.LoadLocation(o.TZ)
	if err != nil {
		return nil, imprint.Invalidf("--tz %q: %v", o.TZ, err)
	}
	sources, warns, err := ingest.CollectSources(paths, o.Format)
	if err != nil {
		return nil, err
	}
	if o.MaxLLMCalls < 0 {
		return nil, imprint.Invalidf("--max-llm-calls %d: want 0 (no limit) or more", o.MaxLLMCalls)
	}
	if !o.DryRun {
		release, err := ingest.LockImport(ctx, n.Config.DataDir, o.NoWait, o.Waiting)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	n.UseClock(ctx)
	n.LimitLLMCalls(o.MaxLLMCalls)
	m, err := n.LLM()
	if err != nil {
		return nil, err
	}
	st, err := n.Store(ctx)
	if err != nil {
		return nil, err
	}
	if err := imprint.ValidateWorkspace("--workspace", o.Workspace); err != nil {
		return nil, err
	}
	im := &ingest.Importer{Store: st, Scope: o.Scope, SourceAgents: o.SourceAgents, Workspace: o.Workspace, DryRun: o.DryRun, NoExtract: o.NoExtract, Location: loc,
		WindowSize: n.Config.Extraction.MaxMessagesPerExtraction, Background: n.Config.Extraction.MaxBackgroundMessages}
	if !o.NoCapture {
		if im.Capture, err = n.Capture(ctx); err != nil {
			return nil, err
		}
	}
	if !o.DryRun {
		if im.Recorder, err = n.Recorder(ctx); err != nil {
			return nil, err
		}
	}
	var bar ingest.Bar
	if o.Progress != nil {
		bar = o.Progress(len(sources))
		im.Progress = bar
	}
	if !o.DryRun && !o.NoExtract {
		if im.Extract, err = n.Extract(ctx); err != nil {
			return nil, err
		}
	}
	sum, err := im.Run(ctx, sources)
	if err != nil {
		return nil, err
	}
	sum.Warnings = append(warns, sum.Warnings...)
	sum.LLMConfigured = m != nil
	if bar.Bar != nil {
		bar.Finish()
	}
	for _, u := range n.LLMCalls().Usage() {
		sum.LLMCalls += u.Calls
		sum.PromptTokens += u.PromptTokens
		sum.CompletionTokens += u.CompletionTokens
	}
	if sum.Warnings == nil {
		sum.Warnings = []importer.Warning{}
	}
	return sum, nil
}

// Restore restores the paths when they are imprint exports (and the
// format is imprint or auto) into the node's store and shards, and reports
// whether they were. A mix of exports and transcripts is ErrInvalid.
func (n *Node) Restore(ctx context.Context, o ImportOptions, paths []string) (bool, curate.ExportStats, error) {
	var none curate.ExportStats
	if o.Format != "imprint" && o.Format != "auto" {
		return false, none, nil
	}
	c := curate.CountExports(paths)
	switch {
	case c == 0:
		return false, none, nil
	case c < len(paths):
		return true, none, imprint.Invalidf("import: give imprint exports and transcripts in separate imports")
	case o.DryRun:
		return true, none, imprint.Invalidf("import: --dry-run does not apply to restoring an export")
	}
	release, err := ingest.LockImport(ctx, n.Config.DataDir, o.NoWait, o.Waiting)
	if err != nil {
		return true, none, err
	}
	defer release()
	st, emb, err := n.storeEmbedder(ctx)
	if err != nil {
		return true, none, err
	}
	records, err := n.shardWriter("records", "restore")
	if err != nil {
		return true, none, err
	}
	conv, err := n.shardWriter("conversations", "restore")
	if err != nil {
		return true, none, err
	}
	total, err := curate.RestoreFiles(ctx, curate.RestoreDeps{Store: st, Embedder: emb, Records: records, Conversations: conv}, paths)
	if err != nil {
		return true, none, err
	}
	return true, total, nil
}
