#!/usr/bin/env bash
# Installs the MCP end-to-end test's client: the official TypeScript SDK
# (@modelcontextprotocol/sdk, the exact version pinned in e2e/mcp/package.json
# and package-lock.json) into e2e/mcp/node_modules, which .gitignore covers.
# Idempotent: does nothing when the pinned version is already installed.
#   ./scripts/install-mcp-e2e.sh
# It exits 1 when node or npm is missing or the install fails; the test
# (cmd/imprint TestMCPTypeScriptSDK) then skips, or fails under CI=true.
set -euo pipefail
cd "$(dirname "$0")/../e2e/mcp"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "install-mcp-e2e: node and npm are needed for the MCP end-to-end test (apt-get install -y nodejs npm)" >&2
	exit 1
fi
want=$(node -p 'require("./package.json").dependencies["@modelcontextprotocol/sdk"]')
have=$(node -p 'try { require("./node_modules/@modelcontextprotocol/sdk/package.json").version } catch { "" }')
if [ "$have" = "$want" ]; then
	echo "install-mcp-e2e: @modelcontextprotocol/sdk $have is installed"
	exit 0
fi
echo "install-mcp-e2e: npm ci (@modelcontextprotocol/sdk $want)"
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
