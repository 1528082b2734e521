# free_port prints a TCP port nothing listens on at 127.0.0.1 (sourced by
# scripts/postgres.sh and scripts/pglite.sh), below the kernel's range of
# ephemeral ports: a port of that range can be the local end of an open
# connection (the tests and benchmarks open thousands), which no probe
# sees and which makes a listen on it fail with EADDRINUSE.
free_port() {
	local p low=32768
	if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then
		read -r low _ </proc/sys/net/ipv4/ip_local_port_range
	fi
	if [ "$low" -le 11000 ]; then low=60000; fi
	for _ in $(seq 1 50); do
		p=$((10000 + RANDOM % (low - 10000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "no free port found" >&2
	exit 1
}
