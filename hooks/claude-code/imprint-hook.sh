#!/bin/sh
# imprint hook for Claude Code. Register it for the SessionStart,
# UserPromptSubmit, Stop, SubagentStop and SessionEnd events (see
# docs/claude-code.md); Claude Code writes the hook payload as JSON on
# stdin, which `imprint hook claude-code` reads, so this script needs
# nothing but the imprint binary.
#
#   imprint-hook.sh EVENT
#
# Environment: IMPRINT_BIN (default: imprint on PATH), IMPRINT_SERVER
# (default http://127.0.0.1:8420), IMPRINT_API_TOKEN, IMPRINT_AGENT (default
# claude-code here), IMPRINT_USER, IMPRINT_TENANT.
#
# It always exits 0: imprint's hook already does whatever fails, and this
# script does too when the binary cannot run at all, with one warning
# line on stderr. Claude Code blocks the prompt or the stop on exit 2, and
# memory must never get in the user's way.
set -u
event=${1:-auto}
IMPRINT_AGENT=${IMPRINT_AGENT:-claude-code}
export IMPRINT_AGENT
bin=${IMPRINT_BIN:-imprint}
"$bin" hook claude-code "$event" || echo "imprint hook: warning: $bin exited $? (is it on PATH?)" >&2
exit 0
