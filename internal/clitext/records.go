package clitext

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// Widths of the free-text columns, in runes.
const (
	taskRunes    = 60
	contentRunes = 100
	hitRunes     = 110
)

// Traces writes traces as aligned columns: id, time, session, episode,
// step, α (or "no reflection" for a step nothing reflected on, whose α
// says nothing), tool calls and the user's request. It writes "no traces"
// when there are none.
func Traces(w io.Writer, trs []imprint.Trace) error {
	if len(trs) == 0 {
		_, err := fmt.Fprintln(w, "no traces")
		return err
	}
	t := newTable(w, "ID", "TIME", "SESSION", "EPISODE", "STEP", "α", "TOOLS", "TASK")
	for _, tr := range trs {
		t.row(tr.ID, Time(tr.TS), OrDash(tr.SessionID), tr.EpisodeID, strconv.Itoa(tr.StepIndex), Alpha(tr),
			strconv.Itoa(len(tr.ToolCalls)), OrDash(OneLine(tr.UserText, taskRunes)))
	}
	return t.flush()
}

// Alpha is a trace's α cell: "0.85", "0.30 unusable", or "no reflection"
// when the step has no reflection (its α of 0 is no judgement).
func Alpha(tr imprint.Trace) string {
	if tr.Reflection == nil || tr.ReflectionSource == imprint.ReflectionNone {
		return "no reflection"
	}
	if !tr.Usable {
		return fmt.Sprintf("%.2f unusable", tr.Alpha)
	}
	return fmt.Sprintf("%.2f", tr.Alpha)
}

// Memories writes memories as aligned columns: id, time of the last
// update, session, type, priority, version and content, a superseded or
// forgotten one marked so. It writes "no memories" when there are none.
func Memories(w io.Writer, ms []imprint.Memory) error {
	if len(ms) == 0 {
		_, err := fmt.Fprintln(w, "no memories")
		return err
	}
	t := newTable(w, "ID", "UPDATED", "SESSION", "TYPE", "P", "V", "CONTENT")
	for _, m := range ms {
		content := OneLine(m.Content, contentRunes)
		switch {
		case m.SupersededBy != nil:
			content += " (superseded)"
		case m.ForgottenAt != nil:
			content += " (forgotten)"
		}
		t.row(m.ID, Time(m.UpdatedAt), OrDash(m.SessionID), string(m.Type), strconv.Itoa(m.Priority), "v"+strconv.Itoa(m.Version), content)
	}
	return t.flush()
}

// Hits writes search hits as aligned columns: kind, score, id, session and
// text, best first. It writes "no results" when there are none.
func Hits(w io.Writer, hs []imprint.Hit) error {
	if len(hs) == 0 {
		_, err := fmt.Fprintln(w, "no results")
		return err
	}
	t := newTable(w, "KIND", "SCORE", "ID", "SESSION", "TEXT")
	for _, h := range hs {
		session := "-"
		if h.SessionID != nil {
			session = OrDash(*h.SessionID)
		}
		t.row(string(h.Kind), fmt.Sprintf("%.4f", h.Score), h.ID, session, OneLine(h.Text, hitRunes))
	}
	return t.flush()
}

// Keys writes API keys one a line, oldest first as given: id, name, reach,
// access, creation time and state (never a token). It writes a line saying
// the service is open when there are none.
func Keys(w io.Writer, ks []imprint.APIKey) error {
	if len(ks) == 0 {
		_, err := fmt.Fprintln(w, "no API keys (the service is open unless server.api_token is set)")
		return err
	}
	for _, k := range ks {
		state := "active"
		if k.RevokedAt != nil {
			state = "revoked " + k.RevokedAt.UTC().Format(time.DateTime)
		}
		if _, err := fmt.Fprintf(w, "%s  %-16s %-30s %-10s created %s  %s\n", k.ID, KeyName(k), k.Scope, KeyAccess(k),
			k.CreatedAt.UTC().Format(time.DateTime), state); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

// KeyName is a key's name, "unnamed" when it has none.
func KeyName(k imprint.APIKey) string {
	if k.Name == "" {
		return "unnamed"
	}
	return k.Name
}

// KeyAccess is "read-only" or "read-write".
func KeyAccess(k imprint.APIKey) string {
	if k.ReadOnly {
		return "read-only"
	}
	return "read-write"
}

// Record writes what recording a session's messages did, as imprint
// record prints it: counts, whether extraction became due, each skipped
// message and why.
func Record(w io.Writer, res imprint.RecordResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "session %s: recorded %d, skipped %d, vectors %d", res.SessionID, res.RecordedCount, len(res.Skipped), res.VectorsWritten)
	if res.SchedulerNotified {
		b.WriteString(", extraction due")
	}
	b.WriteString("\n")
	for _, s := range res.Skipped {
		fmt.Fprintf(&b, "  skipped %s: %s\n", s.ID, s.Reason)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// Recall writes a recall's context block as imprint recall prints it, or
// when the block is empty, says on errw that there is nothing to recall
// (so a script reading w gets nothing at all).
func Recall(w, errw io.Writer, res imprint.RecallResult) error {
	if strings.TrimSpace(res.Context) == "" {
		return write(errw, "imprint: nothing to recall\n")
	}
	return write(w, strings.TrimRight(res.Context, "\n")+"\n")
}

// KeyCreated writes the key keys create made and, this once, its token.
func KeyCreated(w io.Writer, k imprint.APIKey, token string) error {
	return write(w, fmt.Sprintf("created %s (%s) for %s, %s\ntoken (shown only now; keep it secret): %s\n",
		k.ID, KeyName(k), k.Scope, KeyAccess(k), token))
}

// KeyRevoked writes the key keys revoke revoked, with when.
func KeyRevoked(w io.Writer, k imprint.APIKey) error {
	at := ""
	if k.RevokedAt != nil {
		at = k.RevokedAt.UTC().Format(time.DateTime)
	}
	return write(w, fmt.Sprintf("revoked %s (%s) at %s\n", k.ID, KeyName(k), at))
}
