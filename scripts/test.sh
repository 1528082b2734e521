#!/usr/bin/env bash
# The project's test command: formatting, vet, and every package's tests.
#   ./scripts/test.sh            # gofmt check, go vet ./..., go test ./...
#   RACE=1 ./scripts/test.sh     # the tests under the race detector
#   SHORT=1 ./scripts/test.sh    # go test -short (skips the slow tests)
# It first installs what the tests need beyond Go (scripts/install-test-deps.sh:
# chromium for the browser test) and scripts/install-mcp-e2e.sh (the MCP TypeScript SDK for
# the MCP end-to-end test); without them those tests skip, or fail under CI=true.
# It starts a throwaway PostgreSQL (scripts/postgres.sh) for the postgres store's
# tests unless IMPRINT_TEST_POSTGRES already names a database, and PGlite (scripts/pglite.sh:
# PostgreSQL 18 with pgvector, npm packages in .pglite/) unless IMPRINT_TEST_PGLITE is set or
# SKIP_PGLITE=1; it stops both at the end. Under CI=true PGlite must start.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== test dependencies"
./scripts/install-test-deps.sh || echo "warning: test dependencies are missing: the browser test skips (and fails under CI=true)" >&2
./scripts/install-mcp-e2e.sh || echo "warning: the MCP end-to-end client is missing: TestMCPTypeScriptSDK skips (and fails under CI=true)" >&2

echo "== PostgreSQL"
stops=()
cleanup() { for c in "${stops[@]}"; do $c || true; done; }
trap cleanup EXIT
if [ -z "${IMPRINT_TEST_POSTGRES:-}" ]; then
	if url=$(PG_FAST=1 ./scripts/postgres.sh start); then
		export IMPRINT_TEST_POSTGRES="$url"
		stops+=('./scripts/postgres.sh stop')
		echo "postgres: $url"
	else
		echo "warning: PostgreSQL could not be started: the postgres tests skip (and fail under CI=true)" >&2
	fi
fi
# PGlite (PostgreSQL 18 with pgvector) starts in the background while vet runs;
# the conformance suite runs there once (TestConformancePGlite and the pgvector cases).
pglite_pid=
if [ -z "${IMPRINT_TEST_PGLITE:-}" ] && [ "${SKIP_PGLITE:-}" != 1 ]; then
	mkdir -p .pglite
	./scripts/pglite.sh start >.pglite/url.out 2>.pglite/start.err &
	pglite_pid=$!
	stops+=('./scripts/pglite.sh stop')
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

flags=(-count=1 -timeout 15m)
if [ "${RACE:-}" = 1 ]; then flags+=(-race); fi
if [ "${SHORT:-}" = 1 ]; then flags+=(-short); fi
if [ -n "$pglite_pid" ]; then
	if wait "$pglite_pid"; then
		IMPRINT_TEST_PGLITE=$(cat .pglite/url.out)
		export IMPRINT_TEST_PGLITE
		echo "pglite: $IMPRINT_TEST_PGLITE"
	elif [ "${CI:-}" = true ]; then
		echo "PGlite could not be started:" >&2
		cat .pglite/start.err >&2
		exit 1
	else
		echo "warning: PGlite could not be started: the pgvector tests skip" >&2
	fi
fi
echo "== go test ${flags[*]} ./..."
go test "${flags[@]}" ./...
