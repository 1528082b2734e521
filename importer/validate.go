package importer

import (
	"fmt"

	imprint "github.com/imprint-dev/imprint"
)

// Input hygiene shared by the readers: text that is not UTF-8 (or escapes
// a lone UTF-16 surrogate) would be stored as U+FFFD without a word, and
// ids with control characters or of unbounded length break keys and logs.
// A whole document with such text is an error naming its line; a line of
// a JSONL stream is skipped with a warning naming it; a message, episode
// or session whose id is unusable is left out with a warning, and the rest
// of the file still imports.

// cleanTranscripts applies cleanTranscript to each of trs, keeping the
// warnings of a transcript left out on the first one kept. With nothing
// left of input that had transcripts, it returns the first problem as an
// error.
func cleanTranscripts(trs []Transcript, file string) ([]Transcript, error) {
	out := trs[:0]
	var lost []Warning
	var first error
	for _, tr := range trs {
		if tr.SessionID == "" && len(tr.Messages) == 0 && len(tr.Episodes) == 0 {
			out = append(out, tr) // only carries warnings
			continue
		}
		tr, err := cleanTranscript(tr, file)
		if err != nil {
			if first == nil {
				first = err
			}
			lost = append(lost, tr.Warnings...)
			lost = append(lost, Warning{File: file, Message: "session skipped: " + err.Error()})
			continue
		}
		out = append(out, tr)
	}
	if len(out) == 0 && first != nil {
		return nil, first
	}
	if len(lost) > 0 {
		out[0].Warnings = append(out[0].Warnings, lost...)
		sortWarnings(out[0].Warnings)
	}
	return out, nil
}

// cleanTranscript returns an error when the session id is unusable, and
// otherwise leaves out, with a warning each, the messages and episodes
// whose ids (a turn's included) are.
func cleanTranscript(tr Transcript, file string) (Transcript, error) {
	if err := imprint.ValidateID("session id", tr.SessionID); err != nil {
		return tr, err
	}
	if err := imprint.ValidateWorkspace("workspace", tr.Workspace); err != nil {
		tr.Warnings = append(tr.Warnings, Warning{File: file, Message: fmt.Sprintf("workspace ignored: %v", err)})
		tr.Workspace = ""
	}
	tr.SetWorkspace(tr.Workspace)
	msgs := tr.Messages[:0:0]
	for i, m := range tr.Messages {
		if err := checkID("", "id", m.ID); err != nil {
			tr.Warnings = append(tr.Warnings, Warning{File: file, Message: fmt.Sprintf("message %d skipped: %v", i, err)})
			continue
		}
		msgs = append(msgs, m)
	}
	eps := tr.Episodes[:0:0]
	for i, ep := range tr.Episodes {
		if err := checkEpisodeIDs(ep); err != nil {
			tr.Warnings = append(tr.Warnings, Warning{File: file, Message: fmt.Sprintf("episode %d skipped: %v", i, err)})
			continue
		}
		eps = append(eps, ep)
	}
	tr.Messages, tr.Episodes = msgs, eps
	return tr, nil
}

// checkEpisodeIDs checks the ids of an episode and of its turns.
func checkEpisodeIDs(ep imprint.Episode) error {
	if err := checkID("", "id", ep.ID); err != nil {
		return err
	}
	for i, t := range ep.Turns {
		if err := checkID("", fmt.Sprintf("turns[%d].id", i), t.ID); err != nil {
			return err
		}
	}
	return nil
}

// SetWorkspace makes ws the workspace of the transcript, its messages and
// its episodes.
func (tr *Transcript) SetWorkspace(ws string) {
	tr.Workspace = ws
	for i := range tr.Messages {
		tr.Messages[i].Workspace = ws
	}
	for i := range tr.Episodes {
		tr.Episodes[i].Workspace = ws
	}
}

// DefaultAgent is the scope agent transcripts of source go to when the
// agent is not chosen (--agent, IMPRINT_AGENT): "claude-code" for Claude
// Code, "openclaw" for OpenClaw, so that every path (hook, import) files a
// host's sessions under the same scope; "" for every other source, which
// keeps imprint's default.
func DefaultAgent(source string) string {
	switch source {
	case SourceClaudeCode, SourceOpenClaw:
		return source
	}
	return ""
}
