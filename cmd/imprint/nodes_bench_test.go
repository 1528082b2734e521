package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/config"
	"github.com/imprint-dev/imprint/internal/pgtest"
)

// BenchmarkNodesLLMBound/N-nodes times an LLM-bound workload — 24
// sessions of 3 episodes, posted at once, every LLM call answered after
// 200 ms, llm.concurrency at its default — from the first post until
// every job is done, on N imprint serve processes sharing one PostgreSQL
// database (N = 1, 2, 3). The processes are started before the timer and
// each has its own fake LLM; sessions are spread over them round robin.
func BenchmarkNodesLLMBound(b *testing.B) {
	if os.Getenv(pgtest.EnvURL) == "" {
		b.Skip(pgtest.EnvURL + " is not set (scripts/postgres.sh start prints a URL)")
	}
	bin := buildImprint(b)
	pgPID := postmasterPID(context.Background(), os.Getenv(pgtest.EnvURL))
	const sessions, episodes = 24, 3
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("%d-nodes", n), func(b *testing.B) {
			var spent, afterPosts time.Duration
			calls := 0
			for b.Loop() {
				b.StopTimer()
				storeURL := pgtest.Schema(b)
				procs := make([]*serveProc, n)
				clients := make([]*workloadClient, n)
				llms := make([]*crashLLM, n)
				for i := range n {
					llms[i] = newCrashLLM(b, 200*time.Millisecond, 200*time.Millisecond)
					llms[i].delay["extract.dedup.v1"] = 200 * time.Millisecond
					env := serveEnv(llms[i].srv.URL)
					env["IMPRINT_STORE"] = storeURL
					env["IMPRINT_LOG_LEVEL"] = "warn"
					p, err := startServe(bin, b.TempDir(), env)
					if err != nil {
						b.Fatal(err)
					}
					procs[i] = p
					clients[i] = &workloadClient{http: &http.Client{Timeout: 30 * time.Second}}
					clients[i].setBase(p.URL)
					if os.Getenv(envTimeline) != "" {
						clients[i].requests = &requestLog{}
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				if os.Getenv(envTimeline) != "" {
					resetStatements(ctx, storeURL)
				}
				cpu0 := readCPU(procs, pgPID)
				b.StartTimer()
				start := time.Now()
				var wg sync.WaitGroup
				errc := make(chan error, sessions)
				for s := range sessions {
					wg.Add(1)
					go func() {
						defer wg.Done()
						errc <- runSession(ctx, clients[s%n], fmt.Sprintf("bench-s%02d", s), s, episodes, 1)
					}()
				}
				wg.Wait()
				posted := time.Now()
				close(errc)
				for err := range errc {
					if err != nil {
						b.Fatal(err)
					}
				}
				if _, err := waitDrained(ctx, clients[0], 4*time.Minute); err != nil {
					b.Fatal(err)
				}
				drained := time.Now()
				spent += drained.Sub(start)
				afterPosts += drained.Sub(posted)
				b.StopTimer()
				if dir := os.Getenv(envTimeline); dir != "" {
					sum, err := writeTimeline(ctx, dir, storeURL, start, posted, drained, procs, llms, clients, cpu0, readCPU(procs, pgPID), config.Defaults().LLM.Concurrency)
					if err != nil {
						b.Fatal(err)
					}
					b.Log(sum)
				}
				cancel()
				for i, p := range procs {
					p.stop()
					calls += llms[i].callCount()
				}
				b.StartTimer()
			}
			b.ReportMetric(spent.Seconds()/float64(b.N), "s/workload")
			// The part after the last post: the sessions' requests take
			// the same CPU on any number of nodes (and on a loaded
			// machine most of a 3-node run), the jobs left then do not.
			b.ReportMetric(afterPosts.Seconds()/float64(b.N), "s-after-posts/workload")
			b.ReportMetric(float64(calls)/float64(b.N), "llm-calls/workload")
		})
	}
}
