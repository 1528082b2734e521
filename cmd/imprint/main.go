// Command imprint is the single imprint binary: the CLI over the capture and
// extraction pipelines, the HTTP service and the MCP server. main only wires
// the process (arguments, standard streams, environment, signals) into run,
// so the whole program can be exercised in-process by tests.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint/internal/clitext"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs imprint with the process environment and returns the exit code.
// SIGINT and SIGTERM cancel the command's context.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runEnv(ctx, args, os.LookupEnv, stdin, stdout, stderr)
}

// runEnv runs imprint with an explicit environment lookup (os.LookupEnv in
// production, a map in tests) and returns the exit code: 0 ok, 1 runtime
// failure, 2 bad input, usage or configuration.
func runEnv(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdin io.Reader, stdout, stderr io.Writer) int {
	a := newApp(lookupEnv, stdin, stdout, stderr)
	root := newRootCmd(a)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && !a.JSON && slices.Contains(args, "--json") {
		a.JSON = true // the error came before flags were parsed
	}
	if cerr := a.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil && isHook(root, args) {
		return a.hookWarning(err)
	}
	// An error before setup ran is a usage error from cobra (unknown
	// command, bad arguments), which cobra reports as plain errors.
	return clitext.WriteError(a.Stderr, err, a.JSON, !a.started)
}

// commands lists every subcommand of imprint. Add new commands here.
func commands(a *App) []*cobra.Command {
	return []*cobra.Command{
		newDoctorCmd(a),
		newCaptureCmd(a),
		newTracesCmd(a),
		newExtractCmd(a),
		withSubcommands(newMemoriesCmd(a), newMemoriesShowCmd(a), newMemoriesEditCmd(a), newMemoriesForgetCmd(a)),
		newRememberCmd(a),
		newForgetCmd(a),
		newExportCmd(a),
		newRebuildCmd(a),
		newSearchCmd(a),
		newRecordCmd(a),
		newImportCmd(a),
		newServeCmd(a),
		newRecallCmd(a),
		newHookCmd(a),
		newEvalCmd(a),
		newKeysCmd(a),
		newMCPCmd(a),
		newMigrateCmd(a),
	}
}

// newRootCmd builds the imprint command with its global flags. Config and
// logging are set up in PersistentPreRunE, so a usage error (unknown flag or
// command, wrong arguments) is reported before any file is read.
func newRootCmd(a *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "imprint",
		Short: "Memory capture engine for AI agents",
		Long: "imprint turns what an agent and its user said and did into durable, scored,\n" +
			"searchable memory: traces of decision steps and typed memories.",
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setup(cmd)
		},
	}
	root.Version = clitext.Version()
	root.SetVersionTemplate("imprint {{.Version}}\n")
	root.SetIn(a.Stdin)
	root.SetOut(a.Stdout)
	root.SetErr(a.Stderr)
	f := root.PersistentFlags()
	f.StringVar(&a.flags.dataDir, "data-dir", "", "data directory (env IMPRINT_DATA_DIR; default $XDG_DATA_HOME/imprint)")
	f.StringVar(&a.flags.config, "config", "", "config file (env IMPRINT_CONFIG; default <data dir>/imprint.yaml if present)")
	f.BoolVar(&a.JSON, "json", false, "machine output on stdout, one JSON object per line")
	f.StringVar(&a.flags.logLevel, "log-level", "", "debug, info, warn or error (env IMPRINT_LOG_LEVEL; default warn, info for serve)")
	f.StringVar(&a.flags.tenant, "tenant", "", "scope tenant (env IMPRINT_TENANT; default \"default\")")
	f.StringVar(&a.flags.user, "user", "", "scope user (env IMPRINT_USER; default \"default\")")
	f.StringVar(&a.flags.agent, "agent", "", "scope agent (env IMPRINT_AGENT; default \"default\")")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return clitext.UsageError{Err: err} })
	root.AddCommand(commands(a)...)
	return root
}
