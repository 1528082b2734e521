#!/usr/bin/env bash
# The project's benchmark command. Runs the benchmarks behind
# docs/benchmarks.md and prints their results, with the machine, the Go
# version, the commit and the load average before and after each group.
#
#   ./scripts/bench.sh                    # every group
#   ./scripts/bench.sh extract search     # some groups
#   COUNT=3 ./scripts/bench.sh record     # repeat each benchmark 3 times
#   BASE=HEAD~1 ROUNDS=6 ./scripts/bench.sh pgimport
#                                         # beside a baseline commit, in the same run
#
# With BASE (a commit), each benchmark is built twice with go test -c, from
# the working tree and from BASE (checked out into a temporary git
# worktree), and the two binaries run in alternation, ROUNDS times each
# (default 5), each from its own checkout's package folder; then benchstat
# (golang.org/x/perf) compares them. On a shared machine whose speed drifts,
# alternating is what makes two commits comparable. recall has no BASE mode
# (its baseline is plain BM25, printed beside it).
#
# Groups: store vector record capture extract search import recall mcp viewer, and
# postgres (not run by default: it starts a durable cluster with scripts/postgres.sh unless
# IMPRINT_TEST_POSTGRES names one; ~10 minutes) and pgimport (the same cluster: the import
# into a fresh and a migrated schema beside SQLite, at 1x and 10x, and Open into a fresh schema)
# (viewer builds a 100k-memory, 100k-trace store, ~2.5 min; set
# IMPRINT_VIEWER_BENCH_DIR to keep it for the next run).
# Benchmarks build their large fixtures (100k rows) once per process, on
# first use; expect the whole run to take about 4 minutes on 2 cores (the
# capture group builds and caches a 100k-trace store in $TMPDIR the first
# time, about a minute more). Numbers are only comparable on an otherwise
# idle machine: check the load averages printed beside them.
set -euo pipefail
cd "$(dirname "$0")/.."

count=${COUNT:-1}
base=${BASE:-}
rounds=${ROUNDS:-5}
benchstat=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
groups=("$@")
if [ ${#groups[@]} -eq 0 ]; then
	groups=(store vector record capture extract search import recall mcp viewer)
fi

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }

echo "== imprint benchmarks"
echo "date:      $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "commit:    $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
echo "go:        $(go version)"
echo "cpus:      $(nproc) x $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"
echo "memory:    $(awk '/MemTotal/ {printf "%.1f GB", $2/1024/1024}' /proc/meminfo 2>/dev/null)"
echo "load avg:  $(loadavg)"

# What the run started, undone at exit: the cluster pgcluster started, the
# baseline's checkout.
pg_started=
work=
on_exit() {
	if [ -n "$pg_started" ]; then
		./scripts/postgres.sh stop || true
	fi
	if [ -n "$work" ]; then
		git worktree remove --force "$work/base" 2>/dev/null || true
		rm -rf "$work"
	fi
}
trap on_exit EXIT

# With BASE: its checkout, and the files the rounds write.
if [ -n "$base" ]; then
	base_rev=$(git rev-parse --short "$base^{commit}")
	work=$(mktemp -d "${TMPDIR:-/tmp}/imprint-bench.XXXXXX")
	git worktree add --quiet --detach "$work/base" "$base_rev"
	echo "baseline:  $base_rev ($base), $rounds alternating rounds"
fi

# pgcluster makes sure IMPRINT_TEST_POSTGRES names a database: a durable
# throwaway cluster (scripts/postgres.sh) when it does not, stopped at exit.
pgcluster() {
	if [ -n "${IMPRINT_TEST_POSTGRES:-}" ]; then
		return
	fi
	IMPRINT_TEST_POSTGRES=$(./scripts/postgres.sh start)
	export IMPRINT_TEST_POSTGRES
	pg_started=1
}

# bench DIR PATTERN BENCHTIME: one go test invocation (one process, so the
# benchmarks in it share their fixtures); with BASE, benchab.
bench() {
	if [ -n "$base" ]; then
		benchab "$@"
		return
	fi
	local dir=$1 pattern=$2 benchtime=$3
	echo
	echo "== go test $dir -run '^\$' -bench '$pattern' -benchtime $benchtime -count $count"
	echo "load avg before: $(loadavg)"
	if ! go test "$dir" -run '^$' -bench "$pattern" -benchtime "$benchtime" -count "$count" -timeout 60m; then
		failed+=("$dir $pattern")
	fi
	echo "load avg after:  $(loadavg)"
}

# benchab DIR PATTERN BENCHTIME: the benchmark of the working tree beside
# BASE's, their binaries in alternation, ROUNDS times each, then benchstat.
benchab() {
	local dir=$1 pattern=$2 benchtime=$3 name
	name=$(echo "$dir $pattern" | tr -c 'A-Za-z0-9' '_')
	echo
	echo "== $base_rev beside the working tree: <bin> -test.run '^\$' -test.bench '$pattern' -test.benchtime $benchtime, from $dir, $rounds rounds"
	if ! go test -c -o "$work/head.test" "$dir" || ! (cd "$work/base" && go test -c -o "$work/base.test" "$dir"); then
		failed+=("$dir $pattern (build)")
		return
	fi
	: >"$work/$name.base"
	: >"$work/$name.head"
	local r
	for r in $(seq "$rounds"); do
		echo "round $r, load avg $(loadavg)"
		(cd "$work/base/$dir" && "$work/base.test" -test.run '^$' -test.bench "$pattern" -test.benchtime "$benchtime" -test.timeout 60m) >>"$work/$name.base" 2>&1 ||
			failed+=("$dir $pattern ($base_rev, round $r)")
		(cd "$dir" && "$work/head.test" -test.run '^$' -test.bench "$pattern" -test.benchtime "$benchtime" -test.timeout 60m) >>"$work/$name.head" 2>&1 ||
			failed+=("$dir $pattern (working tree, round $r)")
	done
	echo "load avg after:  $(loadavg)"
	cp "$work/$name.base" "$work/$base_rev"
	cp "$work/$name.head" "$work/head"
	(cd "$work" && go run "$benchstat" "$base_rev" head) || failed+=("$dir $pattern (benchstat)")
	# Every round's lines, for the record: benchstat gives medians only.
	echo
	grep -h '^Benchmark' "$work/$name.base" | sed "s/^/$base_rev /" || true
	grep -h '^Benchmark' "$work/$name.head" | sed 's/^/head /' || true
}

failed=()

for g in "${groups[@]}"; do
	case $g in
	store) # issue 2: vector top-k, FTS latency, insert throughput
		bench ./sqlite/ . 3s ;;
	vector) # the in-memory top-k scan alone
		bench ./vector/ . 1s ;;
	record) # issue 4: L0 recording throughput
		bench ./record/ BenchmarkRecord 3s ;;
	capture) # issue 3: trace capture of the 40 τ-bench episodes
		bench ./capture/ BenchmarkCaptureTauBench 400x ;;
	extract) # issue 4: LoCoMo conv-26 token budget; dedup recall and memory inserts at 10k/100k
		bench ./extract/ BenchmarkExtractLoCoMoConv26 5x
		bench ./extract/ 'BenchmarkDedupRecall|BenchmarkMemoryInsert' 3s ;;
	search) # issue 5: hybrid search at 100k memories
		bench ./search/ BenchmarkSearch 3s ;;
	import) # issue 5: imprint import of testdata/ without an LLM
		bench ./cmd/imprint/ BenchmarkImportTestdata 5x ;;
	viewer) # issue 16: every page of the web viewer at 100k memories and 100k traces
		bench ./viewer/ BenchmarkPages 20x ;;
	mcp) # issue 14: a read tool call over stdio at 10k memories, beside the HTTP API
		bench ./cmd/imprint/ BenchmarkMCPStdio 500x ;;
	postgres) # issue 15: the PostgreSQL store beside SQLite (same process and rows), import into it, 1-3 nodes on an LLM-bound workload
		pgcluster
		bench ./postgres/ BenchmarkStores 3s
		bench ./cmd/imprint/ 'BenchmarkImportTestdata/(postgres-)?(full|record-only)$' 3x
		bench ./cmd/imprint/ BenchmarkNodesLLMBound 1x ;;
	pgimport) # issue 15: the import into a fresh and a migrated schema beside SQLite's, at 1x and 10x; Open into a fresh schema
		pgcluster
		bench ./cmd/imprint/ '^BenchmarkImportTestdata$/^(full|postgres-full|postgres-full-migrated)$' 10x
		bench ./cmd/imprint/ '^BenchmarkImportTestdataTimes10$' 3x
		bench ./postgres/ '^BenchmarkOpenFresh$' 30x ;;
	recall) # issue 10: recall@1/5/10 of the LoCoMo evidence turns for search and recall, beside BM25
		if [ -n "$base" ]; then
			echo "recall has no BASE mode: its baseline is plain BM25, measured beside it" >&2
			continue
		fi
		echo
		echo "== imprint eval locomo testdata/locomo/locomo-2conv.json"
		echo "load avg before: $(loadavg)"
		if ! { go build -o bin/imprint ./cmd/imprint && bin/imprint eval locomo testdata/locomo/locomo-2conv.json; }; then
			failed+=("recall")
		fi
		echo "load avg after:  $(loadavg)" ;;
	*)
		echo "unknown group $g (want store, vector, record, capture, extract, search, import, recall, mcp, viewer, postgres or pgimport)" >&2
		exit 2 ;;
	esac
done

if [ ${#failed[@]} -gt 0 ]; then
	echo
	echo "FAILED: ${failed[*]}" >&2
	exit 1
fi
