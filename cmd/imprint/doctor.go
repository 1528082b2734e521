package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/internal/clitext"
)

func newDoctorCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, the store and the providers",
		Long: "doctor prints the configuration in effect (secrets masked), checks that the\n" +
			"store is reachable and migrated, and makes one test call to each configured\n" +
			"provider (a provider set to none is skipped). It exits 1 if any check fails.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d := a.node.Doctor(cmd.Context(), a.Scope())
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
				return clitext.WithExitCode(clitext.ExitFailure, fmt.Errorf("doctor: %d of %d checks failed: %s", len(failed), len(d.Checks), strings.Join(failed, ", ")))
			}
			return nil
		},
	}
}
