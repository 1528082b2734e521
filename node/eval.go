package node

import (
	"context"
	"fmt"
	"time"

	"github.com/imprint-dev/imprint/eval"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/ingest"
)

// WithDataDir returns a new node with n's configuration and logger whose
// data dir is dir (imprint eval's fresh one). Nothing is opened yet.
func (n *Node) WithDataDir(dir string) *Node {
	cfg := *n.Config
	cfg.DataDir = dir
	return New(&cfg, n.Logger)
}

// EvalSystem imports the LoCoMo file at path with imprint import's own code
// (record, capture, extract; o gives the scope and the progress bar) into
// the node's store and returns the system imprint eval measures: the store
// with the searcher and recaller imprint search and recall use.
func (n *Node) EvalSystem(ctx context.Context, o ingest.Options, path string) (eval.System, error) {
	start := time.Now()
	o.Format, o.TZ = importer.FormatLoCoMo, "UTC"
	sum, err := n.Import(ctx, o, []string{path})
	if err != nil {
		return eval.System{}, fmt.Errorf("eval: import %s: %w", path, err)
	}
	took := time.Since(start)
	st, err := n.Store(ctx)
	if err != nil {
		return eval.System{}, err
	}
	r, err := n.Recaller(ctx)
	if err != nil {
		return eval.System{}, err
	}
	m, err := n.LLM()
	if err != nil {
		return eval.System{}, err
	}
	extractor, embedder := "heuristic", ""
	if m != nil {
		extractor = n.Config.LLM.Provider + " " + n.Config.LLM.Model
	}
	if r.Searcher.Embedder != nil {
		embedder = r.Searcher.Embedder.Name()
	}
	return eval.System{Scope: o.Scope, Store: st, Searcher: r.Searcher, Recaller: r,
		Imported: eval.ImportedFrom(sum, took, extractor, embedder)}, nil
}
