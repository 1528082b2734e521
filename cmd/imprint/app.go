package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/node"
)

// App is what every subcommand uses: the loaded configuration, the scope of
// the invocation, the standard streams, a logger, and the node built from
// the configuration (package node: store, LLM, embedder and pipelines,
// opened on first use), which run closes when the command ends.
//
// Config, Logger, the node and the scope are set before a subcommand's
// RunE runs.
type App struct {
	// Config is the configuration in effect (flags > env > file > defaults).
	Config *config.Config
	// JSON is true with --json: machine output on stdout, one object per line.
	JSON bool
	// Stdin, Stdout and Stderr are the command's streams. Human and JSON
	// output go to Stdout; logs and progress to Stderr.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Logger writes text logs to Stderr at --log-level.
	Logger *slog.Logger

	node *node.Node
	// isTerminal reports whether w is a terminal, where progress bars are
	// drawn; nil checks the file descriptor of an *os.File (tests set it).
	isTerminal func(w io.Writer) bool

	lookupEnv func(string) (string, bool)
	flags     globalFlags
	// configFlags names the command flags that set a configuration key
	// (configFlag).
	configFlags []string
	scope       imprint.Scope
	// agentChosen says --agent or IMPRINT_AGENT chose the agent.
	agentChosen bool
	started     bool // setup ran: errors after it are not usage errors
}

// configKeyAnnotation marks a command flag that sets a configuration key
// (configFlag); setup hands such flags to config.Load.
const configKeyAnnotation = "imprint-config-key"

// configFlag adds a string flag to cmd that sets the configuration key:
// its value wins over the file and the environment.
func (a *App) configFlag(cmd *cobra.Command, name, key, usage string) {
	var v string
	cmd.Flags().StringVar(&v, name, "", usage+" (config "+key+", env "+config.EnvName(key)+")")
	_ = cmd.Flags().SetAnnotation(name, configKeyAnnotation, []string{key})
	if !slices.Contains(a.configFlags, name) {
		a.configFlags = append(a.configFlags, name)
	}
}

// globalFlags are the raw values of the persistent flags.
type globalFlags struct {
	dataDir, config, logLevel string
	tenant, user, agent       string
}

func newApp(lookupEnv func(string) (string, bool), stdin io.Reader, stdout, stderr io.Writer) *App {
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	return &App{
		Stdin:     stdin,
		Stdout:    stdout,
		Stderr:    stderr,
		Logger:    slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
		lookupEnv: lookupEnv,
		scope:     imprint.DefaultScope(),
	}
}

// Getenv returns the environment variable key as run sees it ("" when unset).
func (a *App) Getenv(key string) string {
	v, _ := a.lookupEnv(key)
	return v
}

// setup resolves the logger, the scope and the configuration. It runs before
// every subcommand (not for help and completion).
func (a *App) setup(cmd *cobra.Command) error {
	if cmd.Name() == "help" || cmd.Name() == cobra.ShellCompRequestCmd || (cmd.Parent() != nil && cmd.Parent().Name() == "completion") {
		return nil
	}
	a.started = true
	// The CLI keeps stderr for progress and problems; the service logs its
	// work.
	defLevel := "warn"
	if cmd.Name() == "serve" {
		defLevel = "info"
	}
	level, err := config.ParseLogLevel(a.pick(cmd, "log-level", a.flags.logLevel, "IMPRINT_LOG_LEVEL", defLevel))
	if err != nil {
		return err
	}
	a.Logger = slog.New(slog.NewTextHandler(a.Stderr, &slog.HandlerOptions{Level: level}))
	a.scope = imprint.Scope{
		Tenant: a.pick(cmd, "tenant", a.flags.tenant, "IMPRINT_TENANT", imprint.DefaultScopePart),
		User:   a.pick(cmd, "user", a.flags.user, "IMPRINT_USER", imprint.DefaultScopePart),
		Agent:  a.pick(cmd, "agent", a.flags.agent, "IMPRINT_AGENT", imprint.DefaultScopePart),
	}
	a.agentChosen = cmd.Flags().Changed("agent") || strings.TrimSpace(a.Getenv("IMPRINT_AGENT")) != ""
	if err := a.scope.Validate(); err != nil {
		return err
	}
	src := config.Source{LookupEnv: a.lookupEnv}
	if cmd.Flags().Changed("config") {
		src.File = a.flags.config
	}
	if cmd.Flags().Changed("data-dir") {
		src.DataDir = a.flags.dataDir
		src.DataDirSet = true
	}
	for _, name := range a.configFlags {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			src.Flags = append(src.Flags, config.Flag{Key: f.Annotations[configKeyAnnotation][0], Name: name, Value: f.Value.String()})
		}
	}
	cfg, err := config.Load(src)
	if err != nil {
		return err
	}
	a.Config = cfg
	a.node = node.New(cfg, a.Logger)
	return nil
}

// pick returns the flag's value when given, else the environment's, else def.
func (a *App) pick(cmd *cobra.Command, flag, value, env, def string) string {
	if cmd.Flags().Changed(flag) {
		return value
	}
	if v := strings.TrimSpace(a.Getenv(env)); v != "" {
		return v
	}
	return def
}

// Scope returns the scope of this invocation: --tenant/--user/--agent, else
// IMPRINT_TENANT/IMPRINT_USER/IMPRINT_AGENT, else "default" each.
func (a *App) Scope() imprint.Scope { return a.scope }

// ScopeFor is the scope of records from source: Scope, with the source's
// default agent (importer.DefaultAgent) when neither --agent nor
// IMPRINT_AGENT chose one.
func (a *App) ScopeFor(source string) imprint.Scope {
	sc := a.scope
	if d := importer.DefaultAgent(source); d != "" && !a.agentChosen {
		sc.Agent = d
	}
	return sc
}

// PrintJSON writes v to Stdout as one line of JSON.
func (a *App) PrintJSON(v any) error {
	enc := json.NewEncoder(a.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// Print writes v on Stdout: one JSON line with --json, else what text
// writes. Human output lives in the libraries, not here: text is a result's
// WriteText method (capture.Result, extract.Result, ingest.Summary,
// eval.Report, …) or an internal/clitext function; a new command prints
// through Print or printList the same way.
func (a *App) Print(v any, text func(io.Writer) error) error {
	if a.JSON {
		return a.PrintJSON(v)
	}
	return text(a.Stdout)
}

// printList writes items on Stdout: one JSON line each with --json, else
// the aligned listing text writes (clitext.Traces, clitext.Memories, …).
func printList[T any](a *App, items []T, text func(io.Writer, []T) error) error {
	if !a.JSON {
		return text(a.Stdout, items)
	}
	for _, it := range items {
		if err := a.PrintJSON(it); err != nil {
			return err
		}
	}
	return nil
}

// Printf writes human output to Stdout.
func (a *App) Printf(format string, args ...any) {
	fmt.Fprintf(a.Stdout, format, args...)
}

// Close releases what the node opened. run calls it once the command
// returns.
func (a *App) Close() error {
	if a.node == nil {
		return nil
	}
	return a.node.Close()
}
