// Package importer reads agent transcripts from disk (τ-bench trajectories,
// LoCoMo conversations, Claude Code and OpenClaw sessions, OpenAI chat and
// ChatGPT exports, imprint's own JSON) and turns each conversation into L0
// messages and episodes. Malformed input is reported as a warning naming the
// file and line, and the rest still imports.
package importer
