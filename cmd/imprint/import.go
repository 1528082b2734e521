package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/internal/progress"
)

func newImportCmd(a *App) *cobra.Command {
	var o ingest.Options
	formats := strings.Join(ingest.Formats, ", ")
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
			"(or, with --no-wait, exits 1 naming it). Formats: " + formats + ".",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, paths []string) error {
			defer a.batchGC()()
			a.importOptions(&o)
			// An imprint export (imprint export) is restored, not imported.
			if done, total, err := a.node.Restore(cmd.Context(), o, paths); done || err != nil {
				if err != nil {
					return err
				}
				return a.Print(map[string]any{"restored": total}, total.WriteText)
			}
			sum, err := a.node.Import(cmd.Context(), o, paths)
			if err != nil {
				return err
			}
			return a.Print(sum, sum.WriteText)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Format, "format", "auto", "transcript format: "+formats)
	f.BoolVar(&o.NoExtract, "no-extract", false, "record and capture only; leave messages pending for extraction")
	f.BoolVar(&o.NoCapture, "no-capture", false, "do not capture episodes into traces")
	f.BoolVar(&o.DryRun, "dry-run", false, "report what would be imported and estimate LLM calls and prompt tokens; write nothing")
	f.StringVar(&o.TZ, "tz", "UTC", "time zone of zone-less dates (LoCoMo), e.g. Europe/Amsterdam")
	f.IntVar(&o.MaxLLMCalls, "max-llm-calls", 0, "stop cleanly after this many LLM calls; run the import again to resume (0: no limit)")
	f.StringVar(&o.Workspace, "workspace", "", "the workspace (project) of every imported record (default: each transcript's cwd or project folder, none for other formats)")
	f.BoolVar(&o.NoWait, "no-wait", false, "exit 1 instead of waiting when another import holds the data dir's import lock")
	return cmd
}

// importOptions fills in what an import of this invocation tells and
// whose records it makes: the scope, the lock wait and the progress bar,
// drawn on Stderr when it is a terminal (a.isTerminal when set).
func (a *App) importOptions(o *ingest.Options) {
	o.Scope, o.SourceAgents = a.Scope(), !a.agentChosen
	o.Waiting = func(path, holder string) {
		fmt.Fprintf(a.Stderr, "imprint: waiting for the import lock %s held by pid %s\n", path, holder)
	}
	o.Progress = func(files int) ingest.Bar {
		return ingest.Bar{Bar: progress.ForTerminal(a.Stderr, files, a.isTerminal)}
	}
}
