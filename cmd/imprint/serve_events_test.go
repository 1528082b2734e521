package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeStreamsFinalizedEpisodes checks that closing an episode
// publishes episode.finalized on the session bus and that the service's
// event stream carries it to a client of the episode's scope only, before
// the capture job reports capture.done.
func TestServeStreamsFinalizedEpisodes(t *testing.T) {
	t.Parallel()
	s := startInProc(t, t.TempDir(), map[string]string{"IMPRINT_SESSION_EPISODE_IDLE": "1h", "IMPRINT_EXTRACTION_IDLE": "1h"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	open := func(query string) *bufio.Scanner {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/v1/events"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("events%s: %d", query, resp.StatusCode)
		}
		return bufio.NewScanner(resp.Body)
	}
	mine := open("")
	other := open("?tenant=someone-else")

	post := func(path, body string, want int) map[string]any {
		resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != want {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, out)
		}
		return out
	}
	post("/v1/sessions/ev-1/turns", `{"turns":[{"role":"user","content":"Rename the billing job to invoices."},`+
		`{"role":"assistant","content":"Renamed it and updated the cron entry."}]}`, http.StatusOK)
	fin := post("/v1/sessions/ev-1/finalize", `{}`, http.StatusAccepted)
	epID, _ := fin["episode_id"].(string)
	if epID == "" {
		t.Fatalf("finalize answered %v", fin)
	}

	// Read the stream until capture.done; episode.finalized must come first.
	var names []string
	var finalized map[string]any
	for mine.Scan() {
		line := mine.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || len(names) == 0 {
			continue
		}
		switch names[len(names)-1] {
		case "episode.finalized":
			if err := json.Unmarshal([]byte(data), &finalized); err != nil {
				t.Fatalf("episode.finalized data %q: %v", data, err)
			}
		case "capture.done":
			if finalized == nil {
				t.Fatalf("capture.done before episode.finalized: events %v", names)
			}
			if finalized["episode_id"] != epID || finalized["session_id"] != "ev-1" ||
				finalized["closed_by"] != "finalized" || finalized["turns"] != float64(2) {
				t.Errorf("episode.finalized = %v, want episode %s of session ev-1, closed_by finalized, 2 turns", finalized, epID)
			}
			cancel()
			// Another scope's stream saw no episode event.
			for other.Scan() {
				if strings.HasPrefix(other.Text(), "event: episode.") {
					t.Errorf("a stream of another scope got %q", other.Text())
				}
			}
			return
		}
	}
	t.Fatalf("stream ended before capture.done (events %v): %v", names, mine.Err())
}
