package httpapi

import (
	"errors"
	"net/http"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestMemoryManagementOverHTTP walks a memory through remember, show,
// edit, forget and purge with the Go client, as the CLI's --server mode
// does, checking what each step changes in listings and search.
func TestMemoryManagementOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := t.Context()
	c := ClientMemories{C: e.c}

	r := e.do("POST", "/v1/memories?tenant=acme&user=ana&agent=coder", `{"content":"Ana deploys with blue-green releases","type":"episodic"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /v1/memories = %d %s, want 201", r.status, r.body)
	}
	again, err := c.Remember(ctx, imprint.RememberRequest{Scope: scopeA, Content: "ana deploys with blue-green releases!"})
	if err != nil {
		t.Fatal(err)
	}
	first := r.json(t)["memory"].(map[string]any)
	if again.Action != imprint.RememberDuplicate || again.Memory.ID != first["id"] || first["extractor"] != imprint.ExtractorManual {
		t.Errorf("remember again = %s %s, want skip of %v (extractor %v)", again.Action, again.Memory.ID, first["id"], first["extractor"])
	}
	id := again.Memory.ID

	v2, err := c.Edit(ctx, imprint.EditRequest{Scope: scopeA, ID: id, Content: "Ana deploys with canary releases"})
	if err != nil {
		t.Fatal(err)
	}
	det, err := c.Show(ctx, scopeA, v2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if det.Version != 2 || len(det.History) != 1 || det.History[0].ID != id {
		t.Errorf("show after edit = v%d history %v, want v2 over %s", det.Version, det.History, id)
	}
	if _, err := c.Edit(ctx, imprint.EditRequest{Scope: scopeA, ID: id, Content: "x"}); !errors.Is(err, imprint.ErrConflict) {
		t.Errorf("edit of a superseded version: %v, want conflict", err)
	}
	if r := e.do("PATCH", "/v1/memories/"+v2.ID+"?tenant=acme&user=ana&agent=coder", `{"content":"  "}`); r.status != http.StatusBadRequest {
		t.Errorf("PATCH with empty content = %d, want 400", r.status)
	}

	gone, err := c.Forget(ctx, scopeA, v2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if gone.ForgottenAt == nil {
		t.Errorf("DELETE answered %+v without forgotten_at", gone)
	}
	listed, err := e.c.Memories(ctx, scopeA, imprint.MemoryFilter{Limit: imprint.NoLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range listed {
		if m.ID == v2.ID {
			t.Errorf("a forgotten memory is listed")
		}
	}
	hits, err := e.c.Search(ctx, imprint.SearchQuery{Scope: scopeA, Text: "canary releases", Kinds: []imprint.Kind{imprint.KindMemory}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 0 {
		t.Errorf("a forgotten memory is searched: %v", hits)
	}
	if _, err := c.Show(ctx, scopeA, v2.ID); err != nil {
		t.Errorf("a forgotten memory cannot be shown: %v", err)
	}

	res, err := c.Purge(ctx, scopeA, v2.ID, imprint.PurgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.MemoryIDs) != 2 {
		t.Errorf("purge removed %v, want both versions", res.MemoryIDs)
	}
	for _, x := range []string{id, v2.ID} {
		if _, err := c.Show(ctx, scopeA, x); !errors.Is(err, imprint.ErrNotFound) {
			t.Errorf("show of purged %s: %v, want not found", x, err)
		}
	}
	if r := e.do("DELETE", "/v1/memories/"+id+"?with_sources=true", nil); r.status != http.StatusBadRequest {
		t.Errorf("with_sources without purge = %d, want 400", r.status)
	}

	// Bulk: every live memory of a session.
	e.putMemory(imprint.Memory{ID: "s1-a", Scope: scopeA, SessionID: "s1", Type: imprint.MemoryPersona, Content: "likes tea"})
	e.putMemory(imprint.Memory{ID: "s1-b", Scope: scopeA, SessionID: "s1", Type: imprint.MemoryPersona, Content: "likes jazz"})
	n, err := c.ForgetMany(ctx, scopeA, imprint.ForgetFilter{SessionID: "s1"})
	if err != nil || n != 2 {
		t.Errorf("forget session s1 = %d, %v; want 2", n, err)
	}
	if _, err := c.ForgetMany(ctx, scopeA, imprint.ForgetFilter{}); !errors.Is(err, imprint.ErrInvalid) {
		t.Errorf("bulk forget without a filter: %v, want invalid", err)
	}
}

// TestMemoryWritesRefuseCrossSite: another site's page cannot make the
// user's browser forget, purge, edit or add a memory.
func TestMemoryWritesRefuseCrossSite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	e.putMemory(imprint.Memory{ID: "m-x", Scope: scopeA, Type: imprint.MemoryPersona, Content: "likes tea"})
	q := "?tenant=acme&user=ana&agent=coder"
	for _, c := range []struct{ method, path, body string }{
		{"DELETE", "/v1/memories/m-x" + q, ""},
		{"DELETE", "/v1/memories/m-x" + q + "&purge=true", ""},
		{"PATCH", "/v1/memories/m-x" + q, `{"content":"likes coffee"}`},
		{"POST", "/v1/memories" + q, `{"content":"likes coffee"}`},
		{"POST", "/v1/memories/forget" + q, `{"session_id":"s"}`},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		r := e.do(c.method, c.path, body, "Sec-Fetch-Site", "cross-site", "Content-Type", "application/json")
		if r.status != http.StatusForbidden {
			t.Errorf("cross-site %s %s = %d, want 403", c.method, c.path, r.status)
		}
	}
	m, err := e.db.GetMemory(t.Context(), scopeA, "m-x")
	if err != nil || m.ForgottenAt != nil || m.SupersededBy != nil {
		t.Errorf("a cross-site request changed the memory: %+v %v", m, err)
	}
}
