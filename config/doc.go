// Package config is imprint's configuration (docs/configuration.md): the
// keys with their defaults and rules, read from the config file, IMPRINT_*
// environment variables and the flags a command was given, in rising
// precedence, and validated. Every command of the binary, the MCP server
// included, loads it the same way.
package config
