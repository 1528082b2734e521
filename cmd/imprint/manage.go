package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/internal/clitext"
)

// This file is memory management by hand: remember, memories show, edit
// and forget, and bulk forget. The work is curate's (imprint.Memories);
// when an imprint serve holds the data dir, or --server is given, the
// commands go through its HTTP API so that its shards and indexes stay its
// own (a purge rewrites the shards).

// memoriesAPI returns where memory management runs: --server (or
// IMPRINT_SERVER), else the imprint serve holding the data dir, else the
// data dir itself.
func (a *App) memoriesAPI(cmd *cobra.Command) (imprint.Memories, error) {
	acc, err := a.access(cmd, true)
	if err != nil {
		return nil, err
	}
	return acc.Memories(cmd.Context())
}

func newRememberCmd(a *App) *cobra.Command {
	var typ, session, workspace string
	cmd := &cobra.Command{
		Use:   "remember TEXT",
		Short: "Add a memory by hand (deduplicated like extracted ones)",
		Long: "Add a memory by hand. Its type is inferred from the text when --type is not given;\n" +
			"a text a live memory already says adds nothing and prints that memory.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			api, err := a.memoriesAPI(cmd)
			if err != nil {
				return err
			}
			res, err := api.Remember(cmd.Context(), imprint.RememberRequest{Scope: a.Scope(), Content: args[0],
				Type: imprint.MemoryType(typ), SessionID: session, Workspace: workspace})
			if err != nil {
				return err
			}
			return a.Print(res.Memory, func(w io.Writer) error { return clitext.Remembered(w, res) })
		},
	}
	cmd.Flags().StringVar(&typ, "type", "", "persona, episodic or instruction (default: inferred from the text)")
	cmd.Flags().StringVar(&session, "session", "", "the session the memory belongs to")
	cmd.Flags().StringVar(&workspace, "workspace", "", "keep the memory in this workspace (project); default: every workspace")
	return addServerFlags(cmd)
}

func newMemoriesShowCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a memory with its history and the messages it came from",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			api, err := a.memoriesAPI(cmd)
			if err != nil {
				return err
			}
			d, err := api.Show(cmd.Context(), a.Scope(), args[0])
			if err != nil {
				return err
			}
			return a.Print(d, func(w io.Writer) error { return clitext.MemoryDetail(w, d) })
		},
	}
	return addServerFlags(cmd)
}

func newMemoriesEditCmd(a *App) *cobra.Command {
	var typ string
	cmd := &cobra.Command{
		Use:   "edit ID TEXT",
		Short: "Correct a memory: a new version supersedes it",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			api, err := a.memoriesAPI(cmd)
			if err != nil {
				return err
			}
			m, err := api.Edit(cmd.Context(), imprint.EditRequest{Scope: a.Scope(), ID: args[0], Content: args[1], Type: imprint.MemoryType(typ)})
			if err != nil {
				return err
			}
			return a.Print(m, func(w io.Writer) error { return clitext.Edited(w, args[0], m) })
		},
	}
	cmd.Flags().StringVar(&typ, "type", "", "change the type: persona, episodic or instruction")
	return addServerFlags(cmd)
}

func newMemoriesForgetCmd(a *App) *cobra.Command {
	var purge, withSources bool
	cmd := &cobra.Command{
		Use:   "forget ID",
		Short: "Forget a memory (kept in history), or with --purge remove it and all its versions everywhere",
		Long: "Forget a memory: it is no longer listed, searched or recalled, but stays in its history\n" +
			"and the records log says so. --purge removes it and all its versions from the store,\n" +
			"the search indexes and the JSONL shards; --with-sources also the messages it came from.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if withSources && !purge {
				return imprint.Invalidf("--with-sources needs --purge")
			}
			api, err := a.memoriesAPI(cmd)
			if err != nil {
				return err
			}
			if purge {
				res, err := api.Purge(cmd.Context(), a.Scope(), args[0], imprint.PurgeOptions{WithSources: withSources})
				if err != nil {
					return err
				}
				return a.Print(res, func(w io.Writer) error { return clitext.Purged(w, res) })
			}
			m, err := api.Forget(cmd.Context(), a.Scope(), args[0])
			if err != nil {
				return err
			}
			return a.Print(m, func(w io.Writer) error { return clitext.Forgot(w, m) })
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "remove the memory and all its versions everywhere")
	cmd.Flags().BoolVar(&withSources, "with-sources", false, "with --purge, also remove the messages it came from")
	return addServerFlags(cmd)
}

func newForgetCmd(a *App) *cobra.Command {
	var session, before string
	var yes bool
	cmd := &cobra.Command{
		Use:   "forget --session S | --before DATE --yes",
		Short: "Forget every memory of a session, or last updated before a date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var f imprint.ForgetFilter
			f.SessionID = strings.TrimSpace(session)
			if before != "" {
				t, err := imprint.ParseTime(before)
				if err != nil {
					return fmt.Errorf("--before: %w", err)
				}
				f.Before = t.Time
			}
			if f.SessionID == "" && f.Before.IsZero() {
				return clitext.UsageError{Err: imprint.Invalidf("forget needs --session or --before")}
			}
			api, err := a.memoriesAPI(cmd)
			if err != nil {
				return err
			}
			n, err := curate.ForgetManyConfirmed(cmd.Context(), api, a.Scope(), f, yes)
			if err != nil {
				return err
			}
			return a.Print(map[string]int{"forgotten": n}, func(w io.Writer) error { return clitext.ForgotMany(w, n) })
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "forget the memories of this session")
	cmd.Flags().StringVar(&before, "before", "", "forget the memories last updated before this date (YYYY-MM-DD, UTC, or RFC 3339)")
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm the bulk forget")
	return addServerFlags(cmd)
}

// withSubcommands adds subs to cmd and returns it.
func withSubcommands(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.AddCommand(subs...)
	return cmd
}
