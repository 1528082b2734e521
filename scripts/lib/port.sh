# free_port prints a TCP port nothing listens on at 127.0.0.1 (sourced by
# scripts/postgres.sh and scripts/pglite.sh).
free_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "no free port found" >&2
	exit 1
}
