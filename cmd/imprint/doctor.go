package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
)

// doctorPingOp is the op of doctor's LLM test call.
const doctorPingOp = "doctor.ping.v1"

// Check statuses.
const (
	statusOK   = "ok"
	statusFail = "fail"
	statusSkip = "skip"
)

// checkResult is one line of imprint doctor.
type checkResult struct {
	Check  string `json:"check"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	// Config is the configuration in effect (secrets masked), on the
	// config check only.
	Config map[string]string `json:"config,omitempty"`
}

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
	checks := []checkResult{
		a.checkConfig(),
		a.checkStore(ctx),
		a.checkLLM(ctx),
		a.checkEmbedding(ctx),
	}
	var failed []string
	for _, c := range checks {
		if c.Status == statusFail {
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

func (a *App) checkConfig() checkResult {
	c := a.Config
	file := "no config file"
	if c.File != "" {
		file = "file " + c.File
	}
	values := map[string]string{}
	for _, e := range c.Entries() {
		values[e.Key] = e.Value
	}
	detail := fmt.Sprintf("%s; data_dir %s; store %s; llm %s; embedding %s; scope %s",
		file, c.DataDir, config.MaskURL(c.Store), describeProvider(c.LLM.Provider, c.LLM.Model), describeProvider(c.Embedding.Provider, c.Embedding.Model), a.Scope())
	return checkResult{Check: "config", Status: statusOK, Detail: detail, Config: values}
}

func describeProvider(provider, model string) string {
	if model == "" || provider == config.ProviderNone || provider == config.ProviderHash {
		return provider
	}
	return provider + "/" + model
}

func (a *App) checkStore(ctx context.Context) checkResult {
	r := checkResult{Check: "store"}
	st, err := a.Store(ctx)
	if err == nil {
		err = st.Ping(ctx)
	}
	if err != nil {
		r.Status, r.Detail = statusFail, err.Error()
		return r
	}
	r.Status = statusOK
	r.Detail = "sqlite " + filepath.Join(a.Config.DataDir, dbFileName) + " reachable and migrated"
	return r
}

func (a *App) checkLLM(ctx context.Context) checkResult {
	r := checkResult{Check: "llm"}
	m, err := a.LLM()
	if err != nil {
		r.Status, r.Detail = statusFail, err.Error()
		return r
	}
	if m == nil {
		r.Status, r.Detail = statusSkip, "llm.provider is none: capture keeps found reflections with α 0.5, extraction is heuristic"
		return r
	}
	start := time.Now()
	resp, err := m.Complete(ctx, imprint.LLMRequest{
		Op:        doctorPingOp,
		System:    "You are a health check. Reply with the single word pong.",
		Messages:  []imprint.ChatMessage{{Role: "user", Content: "ping"}},
		MaxTokens: 8,
	})
	if err != nil {
		r.Status = statusFail
		r.Detail = fmt.Sprintf("%s %s at %s: %v", m.Provider(), m.Model(), a.Config.LLM.BaseURL, err)
		return r
	}
	model := m.Model()
	if resp.Model != "" {
		model = resp.Model
	}
	r.Status = statusOK
	r.Detail = fmt.Sprintf("%s %s at %s replied in %s", m.Provider(), model, a.Config.LLM.BaseURL, time.Since(start).Round(time.Millisecond))
	return r
}

func (a *App) checkEmbedding(ctx context.Context) checkResult {
	r := checkResult{Check: "embedding"}
	e, err := a.Embedder()
	if err != nil {
		r.Status, r.Detail = statusFail, err.Error()
		return r
	}
	if e == nil {
		r.Status, r.Detail = statusSkip, "embedding.provider is none: search uses keywords only"
		return r
	}
	vecs, err := e.Embed(ctx, []string{"imprint doctor: embedding check"})
	if err == nil && (len(vecs) != 1 || len(vecs[0]) == 0 || (e.Dimensions() > 0 && len(vecs[0]) != e.Dimensions())) {
		err = errors.New("the embedder returned no vector of the expected dimension")
	}
	if err != nil {
		r.Status, r.Detail = statusFail, fmt.Sprintf("%s: %v", e.Name(), err)
		return r
	}
	r.Status, r.Detail = statusOK, fmt.Sprintf("%s: one text embedded (%d dimensions)", e.Name(), len(vecs[0]))
	return r
}
