package node

import (
	"context"

	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/ingest"
)

// Import imports paths as imprint import does (ingest.Importer over the
// node's store, recorder and runners) and returns what it did, with the
// LLM calls and tokens it spent. ErrInvalid for a bad option or an
// unreadable path.
func (n *Node) Import(ctx context.Context, o ingest.Options, paths []string) (*ingest.Summary, error) {
	loc, err := o.Validate()
	if err != nil {
		return nil, err
	}
	sources, warns, err := ingest.CollectSources(paths, o.Format)
	if err != nil {
		return nil, err
	}
	if !o.DryRun {
		release, err := ingest.LockImport(ctx, n.Config.DataDir, o.NoWait, o.Waiting)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	im := &ingest.Importer{Scope: o.Scope, SourceAgents: o.SourceAgents, Workspace: o.Workspace, DryRun: o.DryRun, NoExtract: o.NoExtract, Location: loc,
		WindowSize: n.Config.Extraction.MaxMessagesPerExtraction, Background: n.Config.Extraction.MaxBackgroundMessages}
	// The first sources are read while the store opens.
	reading := im.StartReading(ctx, sources)
	defer reading.Close()
	n.UseClock(ctx)
	n.LimitLLMCalls(o.MaxLLMCalls)
	m, err := n.LLM()
	if err != nil {
		return nil, err
	}
	if im.Store, err = n.Store(ctx); err != nil {
		return nil, err
	}
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
	sum, err := im.RunReading(ctx, reading)
	if err != nil {
		return nil, err
	}
	if bar.Bar != nil {
		bar.Finish()
	}
	sum.Complete(warns, m != nil, n.LLMCalls().Usage())
	return sum, nil
}

// Restore restores the paths when they are imprint exports
// (ingest.Options.Restores) into the node's store and shards, and reports
// whether they were. A mix of exports and transcripts is ErrInvalid.
func (n *Node) Restore(ctx context.Context, o ingest.Options, paths []string) (bool, curate.ExportStats, error) {
	var none curate.ExportStats
	if restore, err := o.Restores(paths); !restore || err != nil {
		return restore, none, err
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
