package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/internal/progress"
)

// importFormats are the values --format takes.
var importFormats = ingest.Formats

// importOptions are the flags of imprint import.
type importOptions struct {
	format    string
	noExtract bool
	noCapture bool
	dryRun    bool
	tz        string
	// maxLLMCalls stops the import cleanly after this many LLM calls (0:
	// no limit); noWait exits instead of waiting for the import lock.
	maxLLMCalls int
	noWait      bool
	// workspace, when set, is the workspace of every imported record.
	workspace string
}

// importSummary is the one object imprint import --json prints.
type importSummary = ingest.Summary

func newImportCmd(a *App) *cobra.Command {
	var o importOptions
	cmd := &cobra.Command{
		Use:   "import [--format F] [--no-extract] [--no-capture] [--dry-run] PATH...",
		Short: "Import agent transcripts: record messages, capture episodes, extract memories",
		Long: "import reads transcripts from files or folders (Claude Code project folders such as\n" +
			"~/.claude/projects included), records their messages, captures their episodes into\n" +
			"traces and extracts memories. It is idempotent and resumable: importing the same files\n" +
			"again adds nothing, a transcript that grew adds only what is new, and an interrupted\n" +
			"import continues where it stopped. --max-llm-calls N stops cleanly after N LLM calls\n" +
			"(what is not captured or extracted yet stays for the next import of the same paths).\n" +
			"One import writes a data dir at a time: a second waits for the lock <data dir>/import.lock\n" +
			"(or, with --no-wait, exits 1 naming it). Formats: " + strings.Join(importFormats, ", ") + ".",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runImport(cmd.Context(), o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "auto", "transcript format: "+strings.Join(importFormats, ", "))
	f.BoolVar(&o.noExtract, "no-extract", false, "record and capture only; leave messages pending for extraction")
	f.BoolVar(&o.noCapture, "no-capture", false, "do not capture episodes into traces")
	f.BoolVar(&o.dryRun, "dry-run", false, "report what would be imported and estimate LLM calls and prompt tokens; write nothing")
	f.StringVar(&o.tz, "tz", "UTC", "time zone of zone-less dates (LoCoMo), e.g. Europe/Amsterdam")
	f.IntVar(&o.maxLLMCalls, "max-llm-calls", 0, "stop cleanly after this many LLM calls; run the import again to resume (0: no limit)")
	f.StringVar(&o.workspace, "workspace", "", "the workspace (project) of every imported record (default: each transcript's cwd or project folder, none for other formats)")
	f.BoolVar(&o.noWait, "no-wait", false, "exit 1 instead of waiting when another import holds the data dir's import lock")
	return cmd
}

func (a *App) runImport(ctx context.Context, o importOptions, paths []string) error {
	if done, err := a.restoreExports(ctx, o, paths); done || err != nil {
		return err // an imprint export (imprint export) is restored, not imported
	}
	sum, err := a.importPaths(ctx, o, paths)
	if err != nil {
		return err
	}
	return a.Print(sum, sum.WriteText)
}

// importPaths imports paths as imprint import does and returns what it did.
func (a *App) importPaths(ctx context.Context, o importOptions, paths []string) (*ingest.Summary, error) {
	if !slices.Contains(importFormats, o.format) {
		return nil, imprint.Invalidf("--format %q: want one of %s", o.format, strings.Join(importFormats, ", "))
	}
	loc, err := time.LoadLocation(o.tz)
	if err != nil {
		return nil, imprint.Invalidf("--tz %q: %v", o.tz, err)
	}
	sources, warns, err := ingest.CollectSources(paths, o.format)
	if err != nil {
		return nil, err
	}
	if o.maxLLMCalls < 0 {
		return nil, imprint.Invalidf("--max-llm-calls %d: want 0 (no limit) or more", o.maxLLMCalls)
	}
	if !o.dryRun {
		release, err := ingest.LockImport(ctx, a.Config.DataDir, o.noWait, func(path, holder string) {
			fmt.Fprintf(a.Stderr, "imprint: waiting for the import lock %s held by pid %s\n", path, holder)
		})
		if err != nil {
			return nil, err
		}
		defer release()
	}
	a.useClock(ctx)
	a.mu.Lock()
	a.maxLLMCalls = o.maxLLMCalls
	a.mu.Unlock()
	m, err := a.LLM()
	if err != nil {
		return nil, err
	}
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	if err := imprint.ValidateWorkspace("--workspace", o.workspace); err != nil {
		return nil, err
	}
	im := &ingest.Importer{Store: st, Scope: a.Scope(), SourceAgents: !a.agentChosen, Workspace: o.workspace, DryRun: o.dryRun, NoExtract: o.noExtract, Location: loc,
		WindowSize: a.Config.Extraction.MaxMessagesPerExtraction, Background: a.Config.Extraction.MaxBackgroundMessages}
	if !o.noCapture {
		if im.Capture, err = a.captureRunner(ctx); err != nil {
			return nil, err
		}
	}
	if !o.dryRun {
		if im.Recorder, err = a.l0Recorder(ctx); err != nil {
			return nil, err
		}
	}
	bar := a.progress(len(sources))
	im.Progress = bar
	if !o.dryRun && !o.noExtract {
		if im.Extract, err = a.extractRunner(ctx); err != nil {
			return nil, err
		}
	}
	sum, err := im.Run(ctx, sources)
	if err != nil {
		return nil, err
	}
	sum.Warnings = append(warns, sum.Warnings...)
	sum.LLMConfigured = m != nil
	bar.Finish()
	for _, u := range a.LLMCalls().Usage() {
		sum.LLMCalls += u.Calls
		sum.PromptTokens += u.PromptTokens
		sum.CompletionTokens += u.CompletionTokens
	}
	if sum.Warnings == nil {
		sum.Warnings = []importer.Warning{}
	}
	return sum, nil
}

// progress returns the import's progress bar over files sources: drawn on
// Stderr when it is a terminal (a.isTerminal when set), else one that does
// nothing.
func (a *App) progress(files int) ingest.Bar {
	return ingest.Bar{Bar: progress.ForTerminal(a.Stderr, files, a.isTerminal)}
}
