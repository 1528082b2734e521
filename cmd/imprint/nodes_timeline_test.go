package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// envTimeline names a directory: when set, BenchmarkNodesLLMBound writes
// there, per run, a JSON timeline of the workload (every request, LLM call
// and River job of every node, the CPU time of each process) and logs its
// summary (timeline.summary).
const envTimeline = "IMPRINT_BENCH_TIMELINE"

// timeline is one run of the LLM-bound workload, times in milliseconds
// from the first post.
type timeline struct {
	Nodes      int            `json:"nodes"`
	Posted     float64        `json:"posted_ms"`  // every session posted and ended
	Drained    float64        `json:"drained_ms"` // waitDrained returned
	Slots      int            `json:"slots_per_node"`
	Cores      int            `json:"cores"`
	Calls      []timelineCall `json:"calls"`
	Jobs       []timelineJob  `json:"jobs"`
	ServeCPU   []float64      `json:"serve_cpu_ms"` // user+system of each imprint serve during the run
	PGCPU      float64        `json:"postgres_cpu_ms"`
	BenchCPU   float64        `json:"bench_cpu_ms"` // this process: fake LLMs and the clients
	MachineCPU float64        `json:"machine_cpu_ms"`
	Load       string         `json:"loadavg"`
	NodeIDs    map[string]int `json:"node_ids"`
	Requests   []timelineReq  `json:"requests"`
	Server     serverCounts   `json:"server"`
}

// serverCounts is what the PostgreSQL server did during the run: the
// backends started inside it (a fresh pool's connections), and, when
// pg_stat_statements is loaded, the statements executed and planned
// (pg_stat_statements is reset before the run; -1 when absent).
type serverCounts struct {
	Backends   int     `json:"backends_started"`
	JobEngine  int     `json:"job_backends_started"` // of them, River's pool (application_name imprint-jobs)
	Statements int64   `json:"statements"`
	Plans      int64   `json:"plans"`
	PlanMS     float64 `json:"plan_ms"`
	ExecMS     float64 `json:"exec_ms"`
}

// resetStatements empties pg_stat_statements, when loaded, before a run.
func resetStatements(ctx context.Context, url string) {
	conn, err := pgxpool.New(ctx, url)
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = conn.Exec(ctx, `SELECT pg_stat_statements_reset()`)
}

// readServerCounts reads the server's counts of the run from start to end
// on conn.
func readServerCounts(ctx context.Context, conn *pgxpool.Pool, start, end time.Time) serverCounts {
	sc := serverCounts{Statements: -1, Plans: -1}
	_ = conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE application_name = 'imprint-jobs') FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND backend_start BETWEEN $1 AND $2`,
		start, end).Scan(&sc.Backends, &sc.JobEngine)
	_ = conn.QueryRow(ctx, `SELECT sum(calls)::int8, sum(plans)::int8, sum(total_plan_time), sum(total_exec_time)
		FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_%'`).Scan(&sc.Statements, &sc.Plans, &sc.PlanMS, &sc.ExecMS)
	return sc
}

type timelineReq struct {
	Node  int     `json:"node"`
	Path  string  `json:"path"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

type timelineCall struct {
	Node  int     `json:"node"`
	Op    string  `json:"op"`
	Turn  string  `json:"turn"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

type timelineJob struct {
	ID        int64    `json:"id"`
	Kind      string   `json:"kind"`
	Session   string   `json:"session"`
	Episode   string   `json:"episode,omitempty"`
	State     string   `json:"state"`
	Attempt   int      `json:"attempt"`
	Created   float64  `json:"created"`
	Attempted *float64 `json:"attempted"`
	Finalized *float64 `json:"finalized"`
	By        []string `json:"attempted_by"`
}

// cpuClock is a reading of the CPU time of the serve processes, of this
// process and of the machine.
type cpuClock struct {
	serve    []float64
	self     float64
	machine  float64
	postgres float64
}

// postmasterPID returns the pid of the PostgreSQL server at url (0 when
// unknown: its data directory is not readable here).
func postmasterPID(ctx context.Context, url string) int {
	conn, err := pgxpool.New(ctx, url)
	if err != nil {
		return 0
	}
	defer conn.Close()
	var dir string
	if conn.QueryRow(ctx, `SHOW data_directory`).Scan(&dir) != nil {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	return pid
}

// treeCPU returns the CPU milliseconds of process pid, of its children
// that ended (reaped) and of its live children.
func treeCPU(pid int) float64 {
	if pid == 0 {
		return 0
	}
	total := 0.0
	if f := statFields(pid); f != nil {
		for _, i := range []int{11, 12, 13, 14} {
			v, _ := strconv.ParseFloat(f[i], 64)
			total += v * 10
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(child); f != nil && f[1] == strconv.Itoa(pid) {
			total += procCPU(child)
		}
	}
	return total
}

// statFields returns the fields of /proc/pid/stat after the command name
// (state first), nil when the process is gone.
func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
}

func readCPU(procs []*serveProc, pgPID int) cpuClock {
	c := cpuClock{postgres: treeCPU(pgPID)}
	for _, p := range procs {
		c.serve = append(c.serve, procCPU(p.cmd.Process.Pid))
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		c.self = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
		// cpu user nice system idle iowait irq softirq steal
		for i, v := range f[1:] {
			if i == 3 || i == 4 || i >= 8 {
				continue
			}
			n, _ := strconv.ParseFloat(v, 64)
			c.machine += n * 10 // USER_HZ 100
		}
	}
	return c
}

// procCPU returns the user+system milliseconds of process pid.
func procCPU(pid int) float64 {
	f := statFields(pid)
	if f == nil {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) * 10
}

// writeTimeline collects the run's timeline into dir and returns its
// summary.
func writeTimeline(ctx context.Context, dir, storeURL string, start, posted, drained time.Time, procs []*serveProc, llms []*crashLLM, clients []*workloadClient, before, after cpuClock, slots int) (string, error) {
	ms := func(t time.Time) float64 { return float64(t.Sub(start).Microseconds()) / 1000 }
	tl := timeline{Nodes: len(procs), Posted: ms(posted), Drained: ms(drained), Slots: slots, Cores: runtime.NumCPU(), NodeIDs: map[string]int{}}
	for i, f := range llms {
		f.mu.Lock()
		for _, c := range f.calls {
			tl.Calls = append(tl.Calls, timelineCall{Node: i, Op: c.op, Turn: c.turn, Start: ms(c.start), End: ms(c.end)})
		}
		f.mu.Unlock()
		tl.ServeCPU = append(tl.ServeCPU, after.serve[i]-before.serve[i])
		if l := clients[i].requests; l != nil {
			l.mu.Lock()
			for _, r := range l.reqs {
				tl.Requests = append(tl.Requests, timelineReq{Node: i, Path: r.path, Start: ms(r.start), End: ms(r.end)})
			}
			l.mu.Unlock()
		}
		tl.NodeIDs[strconv.Itoa(procs[i].cmd.Process.Pid)] = i
	}
	tl.BenchCPU, tl.MachineCPU = after.self-before.self, after.machine-before.machine
	tl.PGCPU = after.postgres - before.postgres
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		tl.Load = strings.TrimSpace(string(b))
	}
	conn, err := pgxpool.New(ctx, storeURL)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	tl.Server = readServerCounts(ctx, conn, start, drained)
	rows, err := conn.Query(ctx, `SELECT id, kind, coalesce(args->>'session_id',''), coalesce(args->>'episode_id',''), state::text, attempt,
		created_at, attempted_at, finalized_at, coalesce(attempted_by, '{}') FROM river_job ORDER BY id`)
	if err != nil {
		return "", err
	}
	for rows.Next() {
		var j timelineJob
		var created time.Time
		var attempted, finalized *time.Time
		if err := rows.Scan(&j.ID, &j.Kind, &j.Session, &j.Episode, &j.State, &j.Attempt, &created, &attempted, &finalized, &j.By); err != nil {
			return "", err
		}
		j.Created = ms(created)
		if attempted != nil {
			v := ms(*attempted)
			j.Attempted = &v
		}
		if finalized != nil {
			v := ms(*finalized)
			j.Finalized = &v
		}
		tl.Jobs = append(tl.Jobs, j)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(tl, "", " ")
	if err != nil {
		return "", err
	}
	name := filepath.Join(dir, fmt.Sprintf("nodes%d-%d.json", len(procs), time.Now().UnixNano()))
	return name + ": " + tl.summary(), os.WriteFile(name, b, 0o644)
}

// summary says where the LLM slots' time went, in slot-seconds from the
// first call to the last reply: busy answering calls, idle while jobs
// waited in the queue, idle with no job waiting; and jobs held by a worker
// but not in an LLM call (store work, or waiting for a slot). Then the
// calls per node and the CPU time.
func (tl timeline) summary() string {
	node := func(j timelineJob) int {
		if len(j.By) == 0 {
			return -1
		}
		parts := strings.Split(j.By[len(j.By)-1], "-")
		if len(parts) < 3 {
			return -1
		}
		if n, ok := tl.NodeIDs[parts[len(parts)-2]]; ok {
			return n
		}
		return -1
	}
	first, last, busy := math.Inf(1), 0.0, 0.0
	perNode := make([]int, tl.Nodes)
	for _, c := range tl.Calls {
		first, last, busy = math.Min(first, c.Start), math.Max(last, c.End), busy+c.End-c.Start
		perNode[c.Node]++
	}
	const step = 5.0
	var idleWaiting, idleEmpty, held float64
	for t := first + step/2; t < last; t += step {
		waiting := 0
		running := make([]int, tl.Nodes)
		for _, j := range tl.Jobs {
			switch {
			case j.Created <= t && (j.Attempted == nil || *j.Attempted > t):
				waiting++
			case j.Attempted != nil && *j.Attempted <= t && (j.Finalized == nil || *j.Finalized > t):
				if n := node(j); n >= 0 {
					running[n]++
				}
			}
		}
		inCall := make([]int, tl.Nodes)
		for _, c := range tl.Calls {
			if c.Start <= t && t < c.End {
				inCall[c.Node]++
			}
		}
		for n := range tl.Nodes {
			free := float64(max(0, tl.Slots-inCall[n])) * step
			if waiting > 0 {
				idleWaiting += free
			} else {
				idleEmpty += free
			}
			held += float64(max(0, running[n]-inCall[n])) * step
		}
	}
	serve := 0.0
	for _, c := range tl.ServeCPU {
		serve += c
	}
	return fmt.Sprintf("%d nodes: posted %.2f s, drained %.2f s; LLM slots %.1f slot-s busy, %.1f idle while jobs waited, %.1f idle with none waiting; "+
		"%.1f job-s held outside an LLM call; calls per node %v; CPU s: serve %.2f, postgres %.2f, bench %.2f, machine %.2f of %.2f; "+
		"server: %d backends started (%d River's), %d statements, %d plans (%.0f ms planning, %.0f ms executing); load %s",
		tl.Nodes, tl.Posted/1000, tl.Drained/1000, busy/1000, idleWaiting/1000, idleEmpty/1000, held/1000, perNode,
		serve/1000, tl.PGCPU/1000, tl.BenchCPU/1000, tl.MachineCPU/1000, float64(tl.Cores)*tl.Drained/1000,
		tl.Server.Backends, tl.Server.JobEngine, tl.Server.Statements, tl.Server.Plans, tl.Server.PlanMS, tl.Server.ExecMS, tl.Load)
}
