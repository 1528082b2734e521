#!/bin/sh
# imprint hook for Claude Code. Register it for the Stop, SubagentStop,
# SessionEnd and UserPromptSubmit events (see docs/claude-code.md); Claude
# Code writes the hook payload as JSON on stdin, which `imprint hook
# claude-code` reads, so this script needs nothing but the imprint binary.
#
#   imprint-hook.sh EVENT
#
# Environment: IMPRINT_BIN (default: imprint on PATH), IMPRINT_SERVER
# (default http://127.0.0.1:8420), IMPRINT_API_TOKEN, IMPRINT_AGENT (default
# claude-code here), IMPRINT_USER, IMPRINT_TENANT.
#
# A failure exits 1, which Claude Code reports without blocking the session
# (exit 2 would block it), so a stopped service never gets in the way.
set -u
event=${1:-auto}
IMPRINT_AGENT=${IMPRINT_AGENT:-claude-code}
export IMPRINT_AGENT
"${IMPRINT_BIN:-imprint}" hook claude-code "$event" || exit 1
