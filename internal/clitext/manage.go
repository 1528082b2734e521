package clitext

import (
	"fmt"
	"io"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// This file is what memory management by hand prints: remember, memories
// show, edit, forget (and --purge) and bulk forget.

// Remembered writes what a remember did: the memory added, or the live one
// that already says the text.
func Remembered(w io.Writer, res imprint.RememberResult) error {
	if res.Action == imprint.RememberDuplicate {
		return write(w, fmt.Sprintf("already remembered as %s (%s): %s\n", res.Memory.ID, res.Memory.Type, OneLine(res.Memory.Content, contentRunes)))
	}
	return write(w, fmt.Sprintf("remembered %s (%s, %s)\n", res.Memory.ID, res.Memory.Type, res.Action))
}

// MemoryDetail writes a memory with its state, its history and the
// messages it came from.
func MemoryDetail(w io.Writer, d imprint.MemoryDetail) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  v%d  p=%d  %s\n", d.ID, d.Type, d.Version, d.Priority, MemoryState(d.Memory))
	fmt.Fprintf(&b, "  %s\n", d.Content)
	fmt.Fprintf(&b, "  extractor %s, session %s, created %s, updated %s\n", d.Extractor, orNone(d.SessionID), d.CreatedAt, d.UpdatedAt)
	if len(d.History) > 0 {
		fmt.Fprintf(&b, "history (%d):\n", len(d.History))
		for _, h := range d.History {
			fmt.Fprintf(&b, "  %s  v%d  %s  %s\n", h.ID, h.Version, h.UpdatedAt, OneLine(h.Content, 90))
		}
	}
	if len(d.Sources) > 0 {
		fmt.Fprintf(&b, "sources (%d):\n", len(d.Sources))
		for _, m := range d.Sources {
			fmt.Fprintf(&b, "  %s  %s  %s: %s\n", m.ID, m.Timestamp, m.Role, OneLine(m.Content, 90))
		}
	}
	return write(w, b.String())
}

// MemoryState is "live", "superseded by ID" or "forgotten TIME".
func MemoryState(m imprint.Memory) string {
	switch {
	case m.ForgottenAt != nil:
		return "forgotten " + m.ForgottenAt.String()
	case m.SupersededBy != nil:
		return "superseded by " + *m.SupersededBy
	}
	return "live"
}

// Edited writes that the memory id was corrected by the new version m.
func Edited(w io.Writer, id string, m imprint.Memory) error {
	return write(w, fmt.Sprintf("edited %s: version %d is %s\n", id, m.Version, m.ID))
}

// Forgot writes that a memory was forgotten.
func Forgot(w io.Writer, m imprint.Memory) error {
	return write(w, fmt.Sprintf("forgot %s\n", m.ID))
}

// Purged writes what a purge removed.
func Purged(w io.Writer, res imprint.PurgeResult) error {
	return write(w, fmt.Sprintf("purged %d versions and %d messages (%d shard lines)\n", len(res.MemoryIDs), len(res.MessageIDs), res.ShardLines))
}

// ForgotMany writes how many memories a bulk forget retired.
func ForgotMany(w io.Writer, n int) error {
	return write(w, fmt.Sprintf("forgot %s\n", Count(n, "memory", "memories")))
}

// Count is "1 memory" or "N memories".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func write(w io.Writer, s string) error {
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
