#!/usr/bin/env bash
# The project's benchmark command. Runs the benchmarks behind
# docs/benchmarks.md and prints their results, with the machine, the Go
# version, the commit and the load average before and after each group.
#
#   ./scripts/bench.sh                    # every group
#   ./scripts/bench.sh extract search     # some groups
#   COUNT=3 ./scripts/bench.sh record     # repeat each benchmark 3 times
#
# Groups: store vector record capture extract search import recall mcp viewer, and
# postgres (not run by default: it starts a durable cluster with scripts/postgres.sh unless
# IMPRINT_TEST_POSTGRES names one; ~10 minutes)
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

# bench DIR PATTERN BENCHTIME: one go test invocation (one process, so the
# benchmarks in it share their fixtures).
bench() {
	local dir=$1 pattern=$2 benchtime=$3
	echo
	echo "== go test $dir -run '^\$' -bench '$pattern' -benchtime $benchtime -count $count"
	echo "load avg before: $(loadavg)"
	if ! go test "$dir" -run '^$' -bench "$pattern" -benchtime "$benchtime" -count "$count" -timeout 60m; then
		failed+=("$dir $pattern")
	fi
	echo "load avg after:  $(loadavg)"
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
		if [ -z "${IMPRINT_TEST_POSTGRES:-}" ]; then
			IMPRINT_TEST_POSTGRES=$(./scripts/postgres.sh start)
			export IMPRINT_TEST_POSTGRES
			trap './scripts/postgres.sh stop' EXIT
		fi
		bench ./postgres/ BenchmarkStores 3s
		bench ./cmd/imprint/ 'BenchmarkImportTestdata/(postgres-)?(full|record-only)$' 3x
		bench ./cmd/imprint/ BenchmarkNodesLLMBound 1x ;;
	recall) # issue 10: recall@1/5/10 of the LoCoMo evidence turns for search and recall, beside BM25
		echo
		echo "== imprint eval locomo testdata/locomo/locomo-2conv.json"
		echo "load avg before: $(loadavg)"
		if ! { go build -o bin/imprint ./cmd/imprint && bin/imprint eval locomo testdata/locomo/locomo-2conv.json; }; then
			failed+=("recall")
		fi
		echo "load avg after:  $(loadavg)" ;;
	*)
		echo "unknown group $g (want store, vector, record, capture, extract, search, import, recall, mcp, viewer or postgres)" >&2
		exit 2 ;;
	esac
done

if [ ${#failed[@]} -gt 0 ]; then
	echo
	echo "FAILED: ${failed[*]}" >&2
	exit 1
fi
