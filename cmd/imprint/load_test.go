package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

var loadFlag = flag.Bool("load", false, "run TestServeLoad (50 sessions x 200 messages against imprint serve on loopback)")

// Load shape (issue 6, requirement 9).
const (
	loadSessions = 50
	loadMessages = 200
	loadBatch    = 5
)

// TestServeLoad posts 50 concurrent sessions of 200 messages each, in
// batches of 5, to imprint serve on a loopback port, and requires zero
// errors and every message recorded exactly once. It reports the request
// latency percentiles and the throughput; it runs only with -load:
//
//	go test ./cmd/imprint -run TestServeLoad -load -v
func TestServeLoad(t *testing.T) {
	if !*loadFlag {
		t.Skip("load test; run with -load")
	}
	dir := t.TempDir()
	s := startInProc(t, dir, map[string]string{"IMPRINT_LOG_LEVEL": "warn"})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadSessions}, Timeout: 30 * time.Second}

	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      []string
		recorded  int
	)
	start := time.Now()
	var wg sync.WaitGroup
	for sess := range loadSessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := fmt.Sprintf("load-%02d", sess)
			base := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
			for b := 0; b < loadMessages; b += loadBatch {
				msgs := make([]map[string]any, 0, loadBatch)
				for i := b; i < b+loadBatch; i++ {
					role := "user"
					if i%2 == 1 {
						role = "assistant"
					}
					msgs = append(msgs, map[string]any{
						"id": fmt.Sprintf("%s-m%03d", sid, i), "role": role,
						"content":   fmt.Sprintf("Session %d message %d: the deploy of service %d moved to region eu-west-%d after the latency review.", sess, i, i%17, i%3),
						"timestamp": base.Add(time.Duration(i) * time.Second).Format(time.RFC3339),
					})
				}
				body, _ := json.Marshal(map[string]any{"session_id": sid, "messages": msgs})
				t0 := time.Now()
				resp, err := client.Post(s.URL+"/v1/messages", "application/json", bytes.NewReader(body))
				d := time.Since(t0)
				var out struct {
					RecordedCount int `json:"recorded_count"`
				}
				if err == nil {
					data, rerr := io.ReadAll(resp.Body)
					resp.Body.Close()
					switch {
					case rerr != nil:
						err = rerr
					case resp.StatusCode != http.StatusOK:
						err = fmt.Errorf("status %d: %s", resp.StatusCode, data)
					default:
						err = json.Unmarshal(data, &out)
					}
				}
				mu.Lock()
				latencies = append(latencies, d)
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s batch %d: %v", sid, b/loadBatch, err))
				}
				recorded += out.RecordedCount
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exit %d", code)
	}
	for _, e := range errs[:min(len(errs), 10)] {
		t.Errorf("request failed: %s", e)
	}
	if len(errs) > 0 {
		t.Fatalf("%d of %d requests failed", len(errs), len(latencies))
	}
	want := loadSessions * loadMessages
	if recorded != want {
		t.Errorf("recorded_count sums to %d, want %d", recorded, want)
	}
	var sessions []string
	for sess := range loadSessions {
		sessions = append(sessions, fmt.Sprintf("load-%02d", sess))
	}
	stored := storedMessages(t, dir, sessions...)
	if len(stored) != want || len(slices.Compact(slices.Clone(stored))) != want {
		t.Errorf("store holds %d messages (%d distinct), want %d each once", len(stored), len(slices.Compact(slices.Clone(stored))), want)
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))] }
	t.Logf("%d sessions x %d messages in batches of %d: %d requests, 0 errors, %d messages recorded once",
		loadSessions, loadMessages, loadBatch, len(latencies), len(stored))
	t.Logf("latency p50 %v, p90 %v, p99 %v, max %v; %.0f messages/s (%.0f requests/s) over %v; GOMAXPROCS %d",
		pct(0.50).Round(10*time.Microsecond), pct(0.90).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond),
		latencies[len(latencies)-1].Round(10*time.Microsecond), float64(want)/wall.Seconds(), float64(len(latencies))/wall.Seconds(),
		wall.Round(time.Millisecond), runtime.GOMAXPROCS(0))
}
