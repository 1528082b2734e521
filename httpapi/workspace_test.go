package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestWorkspaceOverHTTP: messages and episodes posted with a workspace
// keep it (and the JSON shows it, while the scope object stays {tenant,
// user, agent}); ?workspace= narrows the memory, trace and search
// listings, without it they cover every workspace; a read by id needs
// none; a bad workspace is 400.
func TestWorkspaceOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	r := e.do("POST", "/v1/messages", map[string]any{"session_id": "s-app", "scope": scopeA, "workspace": "/src/app",
		"messages": []map[string]any{{"id": "m1", "role": "user", "content": "deploy the app with make"}}})
	if r.status != http.StatusOK {
		t.Fatalf("POST /v1/messages: %d %s", r.status, r.body)
	}
	m, err := e.db.GetMessage(context.Background(), scopeA, "s-app", "m1")
	if err != nil || m.Workspace != "/src/app" {
		t.Fatalf("message m1: workspace %q, %v; want /src/app", m.Workspace, err)
	}
	r = e.do("POST", "/v1/episodes", map[string]any{"session_id": "s-app", "scope": scopeA, "workspace": "/src/app",
		"turns": []map[string]any{{"role": "user", "content": "deploy"}, {"role": "assistant", "content": "done"}}})
	if r.status != http.StatusAccepted {
		t.Fatalf("POST /v1/episodes: %d %s", r.status, r.body)
	}
	epID, _ := r.json(t)["episode_id"].(string)
	r = e.do("GET", "/v1/episodes/"+epID+q(scopeA), nil)
	var ep map[string]any
	if err := json.Unmarshal(r.body, &ep); err != nil || ep["workspace"] != "/src/app" {
		t.Fatalf("GET the episode: %d workspace %v (%v): %s", r.status, ep["workspace"], err, r.body)
	}
	if sc, _ := ep["scope"].(map[string]any); len(sc) != 3 {
		t.Errorf("scope object %v, want tenant, user and agent only", sc)
	}

	e.putMemory(imprint.Memory{ID: "mem-app", Content: "deploy the app with make", Type: imprint.MemoryInstruction, Scope: scopeA,
		Workspace: "/src/app", SessionID: "s-app", SourceMessageIDs: []string{}})
	e.putMemory(imprint.Memory{ID: "mem-site", Content: "deploy the site with make", Type: imprint.MemoryInstruction, Scope: scopeA,
		Workspace: "/src/site", SessionID: "s-site", SourceMessageIDs: []string{}})
	e.putMemory(imprint.Memory{ID: "mem-all", Content: "deploy only on weekdays", Type: imprint.MemoryInstruction, Scope: scopeA,
		SessionID: "s-home", SourceMessageIDs: []string{}})
	memories := func(query string) []string {
		t.Helper()
		var out memoriesBody
		r := e.do("GET", "/v1/memories"+query, nil)
		if r.status != http.StatusOK || json.Unmarshal(r.body, &out) != nil {
			t.Fatalf("GET /v1/memories%s: %d %s", query, r.status, r.body)
		}
		var ids []string
		for _, m := range out.Memories {
			ids = append(ids, m.ID)
		}
		slices.Sort(ids)
		return ids
	}
	if got := memories(q(scopeA)); !slices.Equal(got, []string{"mem-all", "mem-app", "mem-site"}) {
		t.Errorf("memories without a workspace = %v, want every workspace's", got)
	}
	if got := memories(q(scopeA, "workspace", "/src/site")); !slices.Equal(got, []string{"mem-site"}) {
		t.Errorf("memories of /src/site = %v", got)
	}
	var one map[string]any
	if r := e.do("GET", "/v1/memories/mem-site"+q(scopeA), nil); r.status != http.StatusOK || json.Unmarshal(r.body, &one) != nil || one["workspace"] != "/src/site" {
		t.Errorf("GET /v1/memories/mem-site: %d %s", r.status, r.body)
	}
	var global map[string]any
	if r := e.do("GET", "/v1/memories/mem-all"+q(scopeA), nil); r.status != http.StatusOK || json.Unmarshal(r.body, &global) != nil {
		t.Errorf("GET /v1/memories/mem-all: %d %s", r.status, r.body)
	} else if _, ok := global["workspace"]; ok {
		t.Errorf("a workspace-less memory shows a workspace key: %s", r.body)
	}
	var hits hitsBody
	if r := e.do("GET", "/v1/search"+q(scopeA, "q", "deploy make", "kind", "memory", "workspace", "/src/app"), nil); r.status != http.StatusOK || json.Unmarshal(r.body, &hits) != nil {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	for _, h := range hits.Hits {
		if h.ID != "mem-app" {
			t.Errorf("search in /src/app found %s", h.ID)
		}
	}
	var rec imprint.RecallResult
	if r := e.do("GET", "/v1/recall"+q(scopeA, "q", "how do we deploy", "workspace", "/src/app"), nil); r.status != http.StatusOK || json.Unmarshal(r.body, &rec) != nil {
		t.Fatalf("recall: %d %s", r.status, r.body)
	}
	var recalled []string
	for _, h := range rec.Hits {
		recalled = append(recalled, h.ID)
	}
	if !slices.Contains(recalled, "mem-app") || !slices.Contains(recalled, "mem-all") || slices.Contains(recalled, "mem-site") {
		t.Errorf("recall in /src/app = %v, want mem-app and mem-all, not mem-site", recalled)
	}
	for _, path := range []string{"/v1/memories", "/v1/traces", "/v1/search"} {
		if r := e.do("GET", path+q(scopeA, "q", "x", "workspace", "a\x01b"), nil); r.status != http.StatusBadRequest {
			t.Errorf("GET %s with a bad workspace: %d, want 400", path, r.status)
		}
	}
}
