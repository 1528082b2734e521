#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for imprint's tests, benchmarks and local
# multi-node runs: initdb'd as the postgres user (initdb refuses root) in a
# temporary directory, listening on a free loopback port, with a database
# "imprint" and the pg_trgm extension.
#   scripts/postgres.sh start   # prints the URL (postgres://…) on stdout
#   scripts/postgres.sh url     # the URL of the running cluster
#   scripts/postgres.sh stop    # stops the cluster and removes its directory
# The cluster's directory and URL are kept in .postgres/state (git-ignored);
# PGBIN overrides where the PostgreSQL binaries are (default: the newest
# /usr/lib/postgresql/*/bin).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/port.sh
. scripts/lib/port.sh
state_dir=.postgres
state=$state_dir/state

pgbin() {
	if [ -n "${PGBIN:-}" ]; then echo "$PGBIN"; return; fi
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
	if [ -z "$d" ] || [ ! -x "$d/initdb" ]; then
		echo "postgres.sh: no PostgreSQL binaries found (apt-get install postgresql-15)" >&2
		exit 1
	fi
	echo "$d"
}

# as_pg runs a command as the postgres user when we are root.
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		# From /, which postgres may enter (the caller's folder may be a
		# root-only temp dir).
		(cd / && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

running() {
	[ -f "$state" ] || return 1
	# shellcheck disable=SC1090
	. "$state"
	as_pg "$(pgbin)/pg_ctl" -D "$PGDATA_DIR/data" status >/dev/null 2>&1
}

start() {
	if running; then
		echo "$URL"
		return
	fi
	local bin dir port
	bin=$(pgbin)
	# PG_FAST=1 (the tests) trades durability for speed: no fsync.
	local fast_opts=""
	if [ "${PG_FAST:-}" = 1 ]; then fast_opts=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"; fi
	dir=$(mktemp -d "${TMPDIR:-/tmp}/imprint-pg.XXXXXX")
	chmod 755 "$dir"
	if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$dir"; fi
	as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; exit 1; }
	for attempt in 1 2 3; do
		port=$(free_port)
		if as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
			-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300${fast_opts}" \
			start >/dev/null; then
			break
		fi
		[ "$attempt" = 3 ] && { cat "$dir/server.log" >&2; exit 1; }
	done
	as_pg "$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -qAt \
		-c "CREATE DATABASE imprint" >/dev/null
	as_pg "$bin/psql" -h "$dir" -p "$port" -U postgres -d imprint -qAt \
		-c "CREATE EXTENSION IF NOT EXISTS pg_trgm" >/dev/null
	mkdir -p "$state_dir"
	URL="postgres://postgres@127.0.0.1:$port/imprint?sslmode=disable"
	printf 'PGDATA_DIR=%q\nPORT=%q\nURL=%q\n' "$dir" "$port" "$URL" >"$state"
	echo "$URL"
}

stop() {
	if [ ! -f "$state" ]; then
		return
	fi
	# shellcheck disable=SC1090
	. "$state"
	as_pg "$(pgbin)/pg_ctl" -D "$PGDATA_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
	rm -rf "$PGDATA_DIR" "$state"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
url)
	if running; then echo "$URL"; else echo "postgres.sh: no cluster running" >&2; exit 1; fi
	;;
*)
	echo "usage: scripts/postgres.sh start|stop|url" >&2
	exit 2
	;;
esac
