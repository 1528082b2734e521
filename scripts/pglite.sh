#!/usr/bin/env bash
# PGlite — PostgreSQL 18 in Wasm, shipping pgvector — served over the wire
# protocol, for running imprint's PostgreSQL conformance suite against
# pgvector (Debian 12 packages no pgvector for its PostgreSQL 15). The npm
# packages, pinned exactly, are installed into .pglite/ (git-ignored).
#   scripts/pglite.sh install   # npm install the pinned packages (once)
#   scripts/pglite.sh start     # installs when needed, starts, prints the URL
#   scripts/pglite.sh url       # the URL of the running server
#   scripts/pglite.sh stop
# One backend, in memory: for correctness, useless for speed.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/port.sh
. scripts/lib/port.sh
dir=.pglite
state=$dir/state
packages=(@electric-sql/pglite@0.5.14 @electric-sql/pglite-socket@0.2.17 @electric-sql/pglite-pgvector@0.0.15)

install() {
	if ! command -v npm >/dev/null 2>&1; then
		echo "pglite.sh: npm is missing (apt-get install -y npm)" >&2
		exit 1
	fi
	mkdir -p "$dir"
	if [ -f "$dir/installed" ] && [ "$(cat "$dir/installed")" = "${packages[*]}" ]; then
		return
	fi
	[ -f "$dir/package.json" ] || echo '{"name":"imprint-pglite","private":true,"type":"module"}' >"$dir/package.json"
	(cd "$dir" && npm install --no-audit --no-fund --save-exact --loglevel=error "${packages[@]}" >&2)
	echo "${packages[*]}" >"$dir/installed"
}

running() {
	[ -f "$state" ] || return 1
	# shellcheck disable=SC1090
	. "$state"
	kill -0 "$PID" 2>/dev/null
}

start() {
	if running; then
		echo "$URL"
		return
	fi
	install
	cp scripts/pglite-server.mjs "$dir/server.mjs"
	local port attempt
	# A port taken between the probe and the listen (EADDRINUSE) is tried
	# again on another, as scripts/postgres.sh does.
	for attempt in 1 2 3; do
		port=$(free_port)
		(
			cd "$dir"
			PORT=$port nohup node server.mjs >server.log 2>&1 &
			echo $! >pid
		)
		for _ in $(seq 1 600); do
			if grep -q "pglite listening" "$dir/server.log" 2>/dev/null; then
				break
			fi
			if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
				break
			fi
			sleep 0.1
		done
		if grep -q "pglite listening" "$dir/server.log"; then
			break
		fi
		if [ "$attempt" = 3 ] || ! grep -q EADDRINUSE "$dir/server.log"; then
			cat "$dir/server.log" >&2
			exit 1
		fi
	done
	URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable&pool_max_conns=1&default_query_exec_mode=simple_protocol"
	printf 'PID=%q\nURL=%q\n' "$(cat "$dir/pid")" "$URL" >"$state"
	echo "$URL"
}

stop() {
	if running; then
		kill "$PID" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$PID" 2>/dev/null || true
	fi
	rm -f "$state" "$dir/pid"
}

case "${1:-}" in
install) install ;;
start) start ;;
stop) stop ;;
url)
	if running; then echo "$URL"; else echo "pglite.sh: not running" >&2; exit 1; fi
	;;
*)
	echo "usage: scripts/pglite.sh install|start|stop|url" >&2
	exit 2
	;;
esac
