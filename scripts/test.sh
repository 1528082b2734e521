#!/usr/bin/env bash
# The project's test command: formatting, vet, and every package's tests.
#   ./scripts/test.sh            # gofmt check, go vet ./..., go test ./...
#   RACE=1 ./scripts/test.sh     # the tests under the race detector
#   SHORT=1 ./scripts/test.sh    # go test -short (skips the slow tests)
# It first installs what the tests need beyond Go (scripts/install-test-deps.sh:
# chromium for the browser test) and scripts/install-mcp-e2e.sh (the MCP TypeScript SDK for
# the MCP end-to-end test); without them those tests skip, or fail under CI=true.
# It starts a throwaway PostgreSQL (scripts/postgres.sh) for the postgres store's
# tests unless IMPRINT_TEST_POSTGRES already names a database, and stops it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== test dependencies"
./scripts/install-test-deps.sh || echo "warning: test dependencies are missing: the browser test skips (and fails under CI=true)" >&2
./scripts/install-mcp-e2e.sh || echo "warning: the MCP end-to-end client is missing: TestMCPTypeScriptSDK skips (and fails under CI=true)" >&2

echo "== PostgreSQL"
if [ -z "${IMPRINT_TEST_POSTGRES:-}" ]; then
	if url=$(PG_FAST=1 ./scripts/postgres.sh start); then
		export IMPRINT_TEST_POSTGRES="$url"
		trap './scripts/postgres.sh stop' EXIT
		echo "postgres: $url"
	else
		echo "warning: PostgreSQL could not be started: the postgres tests skip (and fail under CI=true)" >&2
	fi
fi

echo "== gofmt"
unformatted=$(find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*' -print0 | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
	echo "gofmt needed on:" >&2
	echo "$unformatted" >&2
	exit 1
fi

echo "== go vet ./..."
go vet ./...

flags=(-count=1 -timeout 5m)
if [ "${RACE:-}" = 1 ]; then flags+=(-race); fi
if [ "${SHORT:-}" = 1 ]; then flags+=(-short); fi
echo "== go test ${flags[*]} ./..."
go test "${flags[@]}" ./...
