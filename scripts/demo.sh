#!/usr/bin/env bash
# Builds imprint and runs it on a fresh data directory.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go build -o bin/imprint ./cmd/imprint"
go build -o bin/imprint ./cmd/imprint

data_dir=$(mktemp -d)
echo "== bin/imprint doctor --data-dir $data_dir"
bin/imprint doctor --data-dir "$data_dir"
