package main

import (
	"context"
	"fmt"
	"strings"

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
	d := ingest.Doctor{Config: a.Config, Checks: []checkResult{
		ingest.CheckConfig(a.Config, a.Scope()),
		ingest.CheckStore(ctx, st, stErr, storeName(a.Config)),
		ingest.CheckLLM(ctx, m, llmErr, a.Config.LLM.BaseURL),
		ingest.CheckEmbedding(ctx, emb, embErr),
	}}
	var err error
	if a.JSON {
		err = printList(a, d.Checks, nil)
	} else {
		err = d.WriteText(a.Stdout)
	}
	if err != nil {
		return err
	}
	if failed := d.Failed(); len(failed) > 0 {
		return withExitCode(exitFailure, fmt.Errorf("doctor: %d of %d checks failed: %s", len(failed), len(d.Checks), strings.Join(failed, ", ")))
	}
	return nil
}
