package config

import (
	"log/slog"
	"strings"

	"github.com/imprint-dev/imprint"
)

// ParseLogLevel reads a --log-level (IMPRINT_LOG_LEVEL) value: debug,
// info (also ""), warn (or warning) or error, in any case. ErrInvalid
// otherwise.
func ParseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, imprint.Invalidf("--log-level must be one of debug, info, warn, error, got %q", s)
}
