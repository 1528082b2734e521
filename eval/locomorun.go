package eval

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/imprint-dev/imprint/ingest"
)

// Build imports a dataset file into a fresh data dir and returns the
// System over it, and what closes it.
type Build func(ctx context.Context, dataDir string) (System, func() error, error)

// RunLoCoMo is imprint eval locomo: it reads the LoCoMo file at path, has
// build import it into a fresh data dir in the temporary directory
// (removed afterwards), asks every question through every method beside
// the BM25 baseline, and returns the report. ErrInvalid when the file is
// not LoCoMo.
func RunLoCoMo(ctx context.Context, path string, build Build) (Report, error) {
	ds, err := ReadLoCoMoFile(path)
	if err != nil {
		return Report{}, err
	}
	dir, err := os.MkdirTemp("", "imprint-eval-")
	if err != nil {
		return Report{}, fmt.Errorf("eval: data dir: %w", err)
	}
	defer os.RemoveAll(dir)
	sys, closeSys, err := build(ctx, dir)
	if closeSys != nil {
		defer closeSys() //nolint:errcheck // closed again below, where the error counts
	}
	if err != nil {
		return Report{}, err
	}
	rep, err := Run(ctx, ds, sys, Methods(sys, Options{}), Options{})
	if err != nil {
		return Report{}, err
	}
	if closeSys != nil {
		if err := closeSys(); err != nil {
			return Report{}, err
		}
	}
	return rep, nil
}

// ImportedFrom says what an import stored, from its summary: how long it
// took, and the extractor ("heuristic", or the LLM's provider and model)
// and embedder ("" for none) it ran with.
func ImportedFrom(sum *ingest.Summary, took time.Duration, extractor, embedder string) Imported {
	return Imported{
		Messages: sum.MessagesRecorded, Episodes: sum.Episodes, Traces: sum.Traces,
		Memories: sum.Memories.Store + sum.Memories.Update + sum.Memories.Merge, Warnings: len(sum.Warnings),
		Extractor: extractor, Embedder: embedder, Seconds: took.Seconds(),
	}
}
