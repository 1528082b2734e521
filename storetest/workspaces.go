package storetest

import (
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// Workspaces used by the workspace cases: two projects and none.
const (
	wsApp  = "/src/app"
	wsSite = "/src/site"
)

// testWorkspaceMemories: a memory keeps its workspace; a listing without
// one covers every workspace of the scope, with one it narrows to it (and
// to the workspace-less memories too with IncludeGlobal); a read by id
// works whatever the workspace.
func testWorkspaceMemories(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	app := memory("m-app", "Always use pnpm in this repo", 0)
	app.Workspace = wsApp
	site := memory("m-site", "Deploy the site with make deploy", 1)
	site.Workspace = wsSite
	global := memory("m-global", "User is called Dana", 2)
	for _, m := range []imprint.Memory{app, site, global} {
		must(t, s.PutMemory(ctx, m, nil))
	}
	got, err := s.GetMemory(ctx, scopeA, "m-app")
	must(t, err)
	if got.Workspace != wsApp {
		t.Errorf("GetMemory workspace = %q, want %q", got.Workspace, wsApp)
	}
	for _, c := range []struct {
		name string
		f    imprint.MemoryFilter
		want []string
	}{
		{"every workspace", imprint.MemoryFilter{}, []string{"m-app", "m-global", "m-site"}},
		{"one workspace", imprint.MemoryFilter{Workspace: wsApp}, []string{"m-app"}},
		{"one workspace and the global ones", imprint.MemoryFilter{Workspace: wsApp, IncludeGlobal: true}, []string{"m-app", "m-global"}},
		{"an unknown workspace", imprint.MemoryFilter{Workspace: "/elsewhere"}, []string{}},
		{"an unknown workspace and the global ones", imprint.MemoryFilter{Workspace: "/elsewhere", IncludeGlobal: true}, []string{"m-global"}},
		{"the global ones only", imprint.MemoryFilter{IncludeGlobal: true}, []string{"m-global"}},
	} {
		ms, err := s.ListMemories(ctx, scopeA, c.f)
		must(t, err)
		if d := diff(c.want, sorted(memIDs(ms))); d != "" {
			t.Errorf("ListMemories %s (-want +got):\n%s", c.name, d)
		}
	}
	// A new version keeps the workspace it is given.
	v2 := memory("m-app2", "Always use pnpm 9 in this repo", 3)
	v2.Workspace, v2.Version, v2.Supersedes = wsApp, 2, []string{"m-app"}
	must(t, s.PutMemory(ctx, v2, []string{"m-app"}))
	ms, err := s.ListMemories(ctx, scopeA, imprint.MemoryFilter{Workspace: wsApp})
	must(t, err)
	if d := diff([]string{"m-app2"}, memIDs(ms)); d != "" {
		t.Errorf("ListMemories after a new version (-want +got):\n%s", d)
	}
}

// testWorkspaceTraces: traces take their episode's workspace and are
// listed per workspace or across all of them; reads by id ignore it.
func testWorkspaceTraces(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	ep1 := episode("ep1", scopeA)
	ep1.Workspace = wsApp
	ep2 := episode("ep2", scopeA)
	ep2.SessionID, ep2.CreatedAt, ep2.Workspace = "s2", at(60), wsSite
	must(t, s.SaveCapture(ctx, ep1, steps(2, "ep1")))
	must(t, s.SaveCapture(ctx, ep2, steps(1, "ep2")))
	got, err := s.GetEpisode(ctx, scopeA, "ep1")
	must(t, err)
	if got.Workspace != wsApp {
		t.Errorf("GetEpisode workspace = %q, want %q", got.Workspace, wsApp)
	}
	tr, err := s.GetTrace(ctx, scopeA, "ep2-step-0")
	must(t, err)
	if tr.Workspace != wsSite {
		t.Errorf("GetTrace workspace = %q, want its episode's %q", tr.Workspace, wsSite)
	}
	for _, c := range []struct {
		name string
		f    imprint.TraceFilter
		want []string
	}{
		{"every workspace", imprint.TraceFilter{}, []string{"ep1-step-0", "ep1-step-1", "ep2-step-0"}},
		{"one workspace", imprint.TraceFilter{Workspace: wsSite}, []string{"ep2-step-0"}},
		{"another workspace", imprint.TraceFilter{Workspace: wsApp}, []string{"ep1-step-0", "ep1-step-1"}},
		{"an unknown workspace", imprint.TraceFilter{Workspace: "/elsewhere"}, []string{}},
	} {
		ts, err := s.ListTraces(ctx, scopeA, c.f)
		must(t, err)
		if d := diff(c.want, traceIDs(ts)); d != "" {
			t.Errorf("ListTraces %s (-want +got):\n%s", c.name, d)
		}
	}
}

// testWorkspaceMessages: messages keep their workspace, the session takes
// the first one named, and a message's id does not depend on it.
func testWorkspaceMessages(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	m1 := msg("m1", imprint.RoleUser, "use pnpm here", 0)
	m1.Workspace = wsApp
	_, err := s.AppendMessages(ctx, scopeA, "s1", []imprint.Message{msg("m0", imprint.RoleUser, "hello", 0), m1})
	must(t, err)
	got, err := s.GetMessage(ctx, scopeA, "s1", "m1")
	must(t, err)
	if got.Workspace != wsApp {
		t.Errorf("GetMessage workspace = %q, want %q", got.Workspace, wsApp)
	}
	sess, err := s.GetSession(ctx, scopeA, "s1")
	must(t, err)
	if sess.Workspace != wsApp {
		t.Errorf("session workspace = %q, want %q (its first message naming one)", sess.Workspace, wsApp)
	}
	// The same message again from another path, without a workspace, is
	// the same record.
	res, err := s.AppendMessages(ctx, scopeA, "s1", []imprint.Message{msg("m1", imprint.RoleUser, "use pnpm here", 0)})
	must(t, err)
	if len(res.Inserted) != 0 {
		t.Errorf("the same message without a workspace was recorded again: %v", res.Inserted)
	}
	bad := msg("m2", imprint.RoleUser, "x", 1)
	bad.Workspace = "w\x00"
	_, err = s.AppendMessages(ctx, scopeA, "s1", []imprint.Message{bad})
	wantErr(t, "AppendMessages with a bad workspace", err, imprint.ErrInvalid)
}

// testWorkspaceSearch: text and vector searches cover every workspace
// without one, narrow to it with one, and add the workspace-less records
// with IncludeGlobal.
func testWorkspaceSearch(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	for _, c := range []struct {
		id, ws, content string
		vec             []float32
	}{
		{"m-app", wsApp, "pnpm is the package manager", []float32{1, 0}},
		{"m-site", wsSite, "npm is the package manager", []float32{0.9, 0.1}},
		{"m-global", "", "the package manager of choice is whatever the repo uses", []float32{0.8, 0.2}},
	} {
		m := memory(c.id, c.content, 0)
		m.Workspace, m.Vec, m.Embedder = c.ws, c.vec, "e/2"
		must(t, s.PutMemory(ctx, m, nil))
	}
	for _, c := range []struct {
		name   string
		ws     string
		global bool
		want   []string
	}{
		{"every workspace", "", false, []string{"m-app", "m-global", "m-site"}},
		{"one workspace", wsSite, false, []string{"m-site"}},
		{"one workspace and the global ones", wsApp, true, []string{"m-app", "m-global"}},
		{"an unknown workspace and the global ones", "/elsewhere", true, []string{"m-global"}},
		{"an unknown workspace", "/elsewhere", false, []string{}},
		{"the global ones only", "", true, []string{"m-global"}},
	} {
		hits, err := s.SearchText(ctx, imprint.TextQuery{Scope: scopeA, Kind: imprint.KindMemory, Text: "package manager",
			Workspace: c.ws, IncludeGlobal: c.global, Limit: 10})
		must(t, err)
		if d := diff(c.want, sorted(hitIDs(hits))); d != "" {
			t.Errorf("SearchText %s (-want +got):\n%s", c.name, d)
		}
		hits, err = s.SearchVector(ctx, imprint.VectorQuery{Scope: scopeA, Kind: imprint.KindMemory, Vector: []float32{1, 0},
			Embedder: "e/2", Workspace: c.ws, IncludeGlobal: c.global, Limit: 10})
		must(t, err)
		if d := diff(c.want, sorted(hitIDs(hits))); d != "" {
			t.Errorf("SearchVector %s (-want +got):\n%s", c.name, d)
		}
	}
}
