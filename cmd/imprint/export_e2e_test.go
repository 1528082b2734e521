package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/imprint-dev/imprint"
)

// managedDataDir imports the Claude Code transcripts of the test data into
// a new data dir and manages a few memories by hand (remember, edit,
// forget, purge with sources); it returns the dir and the purged ids.
func managedDataDir(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"IMPRINT_DATA_DIR": dir}
	must := func(args ...string) result {
		t.Helper()
		r := runBin(t, env, "", args...)
		if r.code != 0 {
			t.Fatalf("imprint %v: exit %d: %s", args, r.code, r.stderr)
		}
		return r
	}
	// Into agent default, with the records below (a Claude Code import
	// goes to agent claude-code otherwise).
	must("import", "--agent", "default", repoFile(t, "testdata/claude-code"))
	must("record", repoFile(t, "examples/conversation.json"))
	must("extract")
	must("remember", "Always run the linters before committing.")
	ms := jsonLines[imprint.Memory](t, must("memories", "--json", "--limit", "0"))
	if len(ms) < 4 {
		t.Fatalf("only %d memories", len(ms))
	}
	must("memories", "edit", ms[0].ID, ms[0].Content+" (checked)")
	must("memories", "forget", ms[1].ID)
	r := must("memories", "forget", ms[2].ID, "--purge", "--with-sources", "--json")
	pr := jsonLines[imprint.PurgeResult](t, r)[0]
	return dir, pr.MemoryIDs
}

func sortedMemories(t *testing.T, env map[string]string) []imprint.Memory {
	t.Helper()
	r := runBin(t, env, "", "memories", "--json", "--all-versions", "--limit", "0")
	if r.code != 0 {
		t.Fatalf("memories: %s", r.stderr)
	}
	ms := jsonLines[imprint.Memory](t, r)
	slices.SortFunc(ms, func(a, b imprint.Memory) int { return strings.Compare(a.ID, b.ID) })
	return ms
}

// TestExportImportRoundTripEndToEnd: `imprint export --out F` of a managed
// data dir and `imprint import --format imprint F` into an empty one give
// the same memories (every version, forgotten ones forgotten), traces and
// searches, with the same ids.
func TestExportImportRoundTripEndToEnd(t *testing.T) {
	t.Parallel()
	src, _ := managedDataDir(t)
	srcEnv := map[string]string{"IMPRINT_DATA_DIR": src}
	out := filepath.Join(t.TempDir(), "scope.jsonl")
	if r := runBin(t, srcEnv, "", "export", "--out", out); r.code != 0 || !strings.Contains(r.stderr, "exported") {
		t.Fatalf("export: exit %d %s", r.code, r.stderr)
	}
	dst := t.TempDir()
	dstEnv := map[string]string{"IMPRINT_DATA_DIR": dst}
	if r := runBin(t, dstEnv, "", "import", "--format", "imprint", out); r.code != 0 || !strings.Contains(r.stdout, "restored") {
		t.Fatalf("import of the export: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if d := cmp.Diff(sortedMemories(t, srcEnv), sortedMemories(t, dstEnv), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("restored memories differ (-exported +restored):\n%s", d)
	}
	traces := func(env map[string]string) string {
		return runBin(t, env, "", "traces", "--json", "--limit", "0").stdout
	}
	if a, b := traces(srcEnv), traces(dstEnv); a != b || a == "" {
		t.Errorf("restored traces differ or are empty (%d vs %d bytes)", len(a), len(b))
	}
	search := func(env map[string]string) string {
		return runBin(t, env, "", "search", "--json", "linters before committing").stdout
	}
	if a, b := search(srcEnv), search(dstEnv); a != b || a == "" {
		t.Errorf("search differs after restore:\n%s\nvs\n%s", a, b)
	}
	// --kind narrows; a bad kind or format is exit 2.
	if r := runBin(t, srcEnv, "", "export", "--kind", "memory"); r.code != 0 || strings.Contains(r.stdout, `"kind":"trace"`) || !strings.Contains(r.stdout, `"kind":"memory"`) {
		t.Errorf("export --kind memory: exit %d, traces or no memories in it", r.code)
	}
	for _, args := range [][]string{{"export", "--kind", "nope"}, {"export", "--format", "csv"}} {
		if r := runBin(t, srcEnv, "", args...); r.code != 2 {
			t.Errorf("imprint %v: exit %d, want 2", args, r.code)
		}
	}
	bad := writeTemp(t, "bad.jsonl", `{"kind":"header","format":"imprint-export","version":1}`+"\n"+`{"kind":"memory"}`+"\n")
	if r := runBin(t, map[string]string{"IMPRINT_DATA_DIR": t.TempDir()}, "", "import", bad); r.code != 2 || !strings.Contains(r.stderr, "line 2") {
		t.Errorf("import of a broken export: exit %d %q, want 2 naming line 2", r.code, r.stderr)
	}
}

// TestRebuildEndToEnd: `imprint rebuild` of a managed data dir gives the
// same memories, keeps the traces, and a purged memory stays gone; it
// refuses while imprint serve holds the data dir.
func TestRebuildEndToEnd(t *testing.T) {
	t.Parallel()
	dir, purged := managedDataDir(t)
	env := map[string]string{"IMPRINT_DATA_DIR": dir}
	before := sortedMemories(t, env)
	tracesBefore := runBin(t, env, "", "traces", "--json", "--limit", "0").stdout
	r := runBin(t, env, "", "rebuild")
	if r.code != 0 || !strings.Contains(r.stdout, "rebuilt") {
		t.Fatalf("rebuild: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	after := sortedMemories(t, env)
	if d := cmp.Diff(before, after, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("memories differ after rebuild (-before +after):\n%s", d)
	}
	for _, m := range after {
		if slices.Contains(purged, m.ID) {
			t.Errorf("purged memory %s came back", m.ID)
		}
	}
	if got := runBin(t, env, "", "traces", "--json", "--limit", "0").stdout; got != tracesBefore {
		t.Errorf("traces changed by the rebuild")
	}
	if x := runBin(t, env, "", "extract", "--json"); strings.TrimSpace(x.stdout) != "" {
		t.Errorf("after the rebuild extraction redid windows: %s", x.stdout)
	}
	srv, err := startServe(imprintBin(t), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.kill()
	if r := runBin(t, env, "", "rebuild"); r.code != 1 || !strings.Contains(r.stderr, "imprint serve") {
		t.Errorf("rebuild while serving: exit %d %q, want 1 naming imprint serve", r.code, r.stderr)
	}
}
