#!/usr/bin/env bash
# Installs what the tests need beyond Go: Debian's chromium, for the browser
# test of the HTTP perimeter (cmd/imprint/browser_test.go). Idempotent: does
# nothing when chromium is already on PATH.
#   ./scripts/install-test-deps.sh
# As root it runs apt-get itself, otherwise through `sudo -n` (never asks
# for a password). It exits 1 when chromium cannot be installed; the
# browser test then skips, or fails under CI=true.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
	echo "install-test-deps: chromium is installed ($(command -v chromium))"
	exit 0
fi

if [ "$(id -u)" = 0 ]; then
	as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	as_root=(sudo -n)
else
	echo "install-test-deps: chromium is missing and neither root nor passwordless sudo is available;" >&2
	echo "install-test-deps: install it with: apt-get install -y chromium" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-test-deps: chromium is missing and there is no apt-get here; install chromium by hand" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-test-deps: ${as_root[*]:+${as_root[*]} }apt-get update"
"${as_root[@]}" apt-get update -qq
echo "install-test-deps: ${as_root[*]:+${as_root[*]} }apt-get install -y --no-install-recommends chromium"
"${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium
command -v chromium
