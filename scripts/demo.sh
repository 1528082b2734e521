#!/usr/bin/env bash
# The main job on the embedded defaults: build imprint, import the example
# transcripts shipped in examples/ (a Claude Code session, τ-bench
# trajectories, a conversation) into a fresh data directory with no LLM
# configured, then search what was imported.
#   ./scripts/demo.sh                 # fresh temp data dir
#   DATA_DIR=~/imprint-demo ./scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go build -o bin/imprint ./cmd/imprint"
go build -o bin/imprint ./cmd/imprint

data_dir=${DATA_DIR:-$(mktemp -d)}
export IMPRINT_DATA_DIR="$data_dir"
echo "== data dir: $data_dir"

echo
echo "== bin/imprint import examples/"
bin/imprint import examples/

echo
echo "== bin/imprint memories --limit 8"
bin/imprint memories --limit 8

echo
echo "== bin/imprint search \"cancel reservation refund\" --kind trace --limit 3"
bin/imprint search "cancel reservation refund" --kind trace --limit 3

echo
echo "== bin/imprint search \"shell commands\" --limit 3"
bin/imprint search "shell commands" --limit 3

echo
echo "== bin/imprint search 上班 --limit 2   (a 2-character CJK query)"
bin/imprint search 上班 --limit 2

echo
echo "== bin/imprint import examples/   (again: idempotent, adds nothing)"
bin/imprint import examples/

echo
echo "== keep exploring this data dir (it stays until you delete it):"
echo "   export IMPRINT_DATA_DIR=$data_dir"
echo "   bin/imprint memories    # or: bin/imprint traces, bin/imprint recall \"shell commands\", bin/imprint serve"
