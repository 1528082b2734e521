package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/clitext"
)

func newKeysCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage the API keys of imprint serve (create, list, revoke)",
		Long: "An API key lets a client of imprint serve reach one tenant, or one user or agent\n" +
			"of it, read-write or read-only. Keys are kept in the store as hashes; a token is\n" +
			"printed once, by keys create. Once a key exists, the service needs a key or the\n" +
			"admin token (server.api_token) on every request but /healthz.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newKeysCreateCmd(a), newKeysListCmd(a), newKeysRevokeCmd(a))
	return cmd
}

// createdKey is what keys create prints with --json: the key and, this
// once, its token.
type createdKey struct {
	imprint.APIKey
	Token string `json:"token"`
}

func newKeysCreateCmd(a *App) *cobra.Command {
	var name string
	var readOnly bool
	cmd := &cobra.Command{
		Use:   "create --tenant T [--user U] [--agent A] [--read-only] [--name N]",
		Short: "Make a key for a tenant (every user and agent of it unless --user or --agent) and print its token once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Only the flags count: a key's reach must be what was typed,
			// never an environment variable's or the "default" fill-in.
			given := func(flag string, v *string) *string {
				if cmd.Flags().Changed(flag) {
					return v
				}
				return nil
			}
			ks, err := imprint.KeyScopeOf(given("tenant", &a.flags.tenant), given("user", &a.flags.user), given("agent", &a.flags.agent))
			if err != nil {
				return clitext.UsageError{Err: err}
			}
			keys, err := a.node.KeyStore(cmd.Context())
			if err != nil {
				return err
			}
			k, tok, err := imprint.CreateAPIKey(cmd.Context(), keys, ks, name, readOnly)
			if err != nil {
				return err
			}
			return a.Print(createdKey{APIKey: k, Token: tok}, func(w io.Writer) error { return clitext.KeyCreated(w, k, tok) })
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "a name to tell the key by in listings")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "the key only reads")
	return cmd
}

func newKeysListCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the API keys, oldest first (never their tokens)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keys, err := a.node.KeyStore(cmd.Context())
			if err != nil {
				return err
			}
			list, err := keys.ListAPIKeys(cmd.Context())
			if err != nil {
				return err
			}
			return printList(a, list, clitext.Keys)
		},
	}
}

func newKeysRevokeCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key: from now on it opens nothing",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			keys, err := a.node.KeyStore(cmd.Context())
			if err != nil {
				return err
			}
			k, err := keys.RevokeAPIKey(cmd.Context(), strings.TrimSpace(args[0]), imprint.Now())
			if err != nil {
				return err
			}
			return a.Print(k, func(w io.Writer) error { return clitext.KeyRevoked(w, k) })
		},
	}
}
