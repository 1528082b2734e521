package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/sqlite"
)

// TestServeCapturesEpisodesOfLookAlikeScopes is the regression of issue 11:
// episode "d:EPD" of agent "ag" and episode "EPD" of agent "ag:d" used to
// share a capture job key, so the second was never captured (no traces,
// nothing pending, no failed job). Both are posted to the /v1 API while no
// worker runs, as when they arrive before the first capture starts; then
// imprint serve starts on the data dir and captures what is queued.
func TestServeCapturesEpisodesOfLookAlikeScopes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	episodes := []struct{ agent, id string }{{"ag", "d:EPD"}, {"ag:d", "EPD"}}

	db, err := sqlite.Open(context.Background(), filepath.Join(dir, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	api := httpapi.NewServer(httpapi.Deps{Store: db}, httpapi.Config{})
	ts := httptest.NewServer(api)
	for _, ep := range episodes {
		body := `{"id":"` + ep.id + `","session_id":"s1","scope":{"agent":"` + ep.agent + `"},"turns":[` +
			`{"role":"user","content":"Check the disk usage on the build host"},` +
			`{"role":"assistant","content":"The build host disk is 80 percent full."}]}`
		resp, err := http.Post(ts.URL+"/v1/episodes", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST episode %s of agent %s: %d", ep.id, ep.agent, resp.StatusCode)
		}
	}
	ts.Close()
	api.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := startInProc(t, dir, nil)
	deadline := time.Now().Add(30 * time.Second) // guards against a hang only
	for _, ep := range episodes {
		q := "?agent=" + url.QueryEscape(ep.agent)
		for {
			st := s.statusOf(t, q)
			if st.Jobs.Available+st.Jobs.Running+st.Jobs.Retryable == 0 {
				if len(st.FailedJobs) > 0 {
					t.Errorf("agent %s: failed jobs %+v", ep.agent, st.FailedJobs)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("agent %s: jobs not done: %+v", ep.agent, st)
			}
			time.Sleep(50 * time.Millisecond)
		}
		resp, err := http.Get(s.URL + "/v1/episodes/" + url.PathEscape(ep.id) + "/traces" + q)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Traces []struct {
				EpisodeID string `json:"episode_id"`
			} `json:"traces"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("traces of episode %s of agent %s: %d %v", ep.id, ep.agent, resp.StatusCode, err)
		}
		if len(out.Traces) == 0 {
			t.Errorf("episode %s of agent %s has no traces: its capture was lost", ep.id, ep.agent)
		}
		for _, tr := range out.Traces {
			if tr.EpisodeID != ep.id {
				t.Errorf("episode %s of agent %s lists a trace of episode %s", ep.id, ep.agent, tr.EpisodeID)
			}
		}
	}
}
