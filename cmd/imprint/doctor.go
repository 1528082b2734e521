package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/ingest"
)

// doctorPingOp is the op of doctor's LLM test call.
const doctorPingOp = ingest.DoctorPingOp

// checkResult is one line of imprint doctor.
type checkResult = ingest.Check

func newDoctorCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, the store and the providers",
		Long: "doctor prints the configuration in effect (secrets masked), checks that the\n" +
			"store is reachable and migrated, and makes one test call to each configured\n" +
			"provider (a provider set to none is skipped). It exits 1 if any check fails.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.doctor(cmd.Context())
		},
	}
}

func (a *App) doctor(ctx context.Context) error {
	st, stErr := a.Store(ctx)
	m, llmErr := a.LLM()
	emb, embErr := a.Embedder()
	checks := []checkResult{
		ingest.CheckConfig(a.Config, a.Scope()),
		ingest.CheckStore(ctx, st, stErr, storeName(a.Config)),
		ingest.CheckLLM(ctx, m, llmErr, a.Config.LLM.BaseURL),
		ingest.CheckEmbedding(ctx, emb, embErr),
	}
	var failed []string
	for _, c := range checks {
		if c.Status == ingest.CheckFail {
			failed = append(failed, c.Check)
		}
	}
	if a.JSON {
		for _, c := range checks {
			if err := a.PrintJSON(c); err != nil {
				return err
			}
		}
	} else if err := a.printChecks(checks); err != nil {
		return err
	}
	if len(failed) > 0 {
		return withExitCode(exitFailure, fmt.Errorf("doctor: %d of %d checks failed: %s", len(failed), len(checks), strings.Join(failed, ", ")))
	}
	return nil
}

func (a *App) printChecks(checks []checkResult) error {
	tw := tabwriter.NewWriter(a.Stdout, 0, 0, 2, ' ', 0)
	for _, c := range checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Check, c.Status, c.Detail)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	fmt.Fprintln(a.Stdout, "\nconfiguration in effect (secrets masked):")
	for _, e := range a.Config.Entries() {
		fmt.Fprintf(tw, "  %s\t%s\t(%s)\n", e.Key, orDash(e.Value), e.Source)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
