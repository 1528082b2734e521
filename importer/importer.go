package importer

import imprint "github.com/imprint-dev/imprint"

// Transcript is what an importer reads from one conversation of a source:
// its L0 messages (user and assistant text) and its episodes (one per user
// request, or as the format defines the task).
type Transcript struct {
	// Source names the format ("tau-bench", "locomo", "claude-code", ...).
	Source    string
	SessionID string
	Messages  []imprint.Message
	Episodes  []imprint.Episode
	// BetweenPeople says the conversation is between people, not with an
	// AI assistant (LoCoMo; imprint messages with "between_people"): its
	// session is recorded with the marker (imprint.Session.BetweenPeople).
	BetweenPeople bool
	// Workspace is the project the session ran in, where the source says
	// (Claude Code's and OpenClaw's cwd); "" when it does not. Its
	// messages and episodes carry it (Message.Workspace).
	Workspace string
	// Warnings report input that was skipped (malformed lines, unknown roles).
	Warnings []Warning
}
