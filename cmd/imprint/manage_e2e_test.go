package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint"
)

// TestManageMemoriesEndToEnd walks the memory-management commands on the
// built binary over a data dir of a real conversation: remember (and its
// dedup), show, edit, forget, bulk forget with and without --yes, and a
// purge while imprint serve holds the data dir, which goes through the
// service.
func TestManageMemoriesEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"IMPRINT_DATA_DIR": dir}
	run := func(args ...string) result {
		t.Helper()
		return runBin(t, env, "", args...)
	}
	mustRun := func(args ...string) result {
		t.Helper()
		r := run(args...)
		if r.code != 0 {
			t.Fatalf("imprint %v: exit %d: %s", args, r.code, r.stderr)
		}
		return r
	}
	mustRun("record", repoFile(t, "examples/conversation.json"))
	mustRun("extract", "--session", "example-mara")
	extracted := jsonLines[imprint.Memory](t, mustRun("memories", "--json", "--limit", "0"))
	if len(extracted) == 0 {
		t.Fatal("no memories extracted")
	}

	var m imprint.Memory
	if err := json.Unmarshal([]byte(mustRun("remember", "--json", "From now on, always answer in metric units.").stdout), &m); err != nil {
		t.Fatal(err)
	}
	if m.Extractor != imprint.ExtractorManual || m.Type != imprint.MemoryInstruction {
		t.Errorf("remember --json = %+v, want a manual instruction", m)
	}
	if r := mustRun("remember", "from now on, always answer in METRIC units"); !strings.Contains(r.stdout, "already remembered as "+m.ID) {
		t.Errorf("remember again printed %q, want it already remembered as %s", r.stdout, m.ID)
	}
	if r := run("remember", "x", "--type", "fact"); r.code != 2 {
		t.Errorf("remember --type fact: exit %d, want 2", r.code)
	}

	old := extracted[0]
	var det imprint.MemoryDetail
	if err := json.Unmarshal([]byte(mustRun("memories", "show", old.ID, "--json").stdout), &det); err != nil {
		t.Fatal(err)
	}
	if det.ID != old.ID || len(det.Sources) == 0 || det.Sources[0].ID != old.SourceMessageIDs[0] {
		t.Errorf("show --json = %s with %d sources, want %s with its source messages", det.ID, len(det.Sources), old.ID)
	}
	if r := mustRun("memories", "show", old.ID); !strings.Contains(r.stdout, old.Content) || !strings.Contains(r.stdout, "sources (") {
		t.Errorf("show printed %q, want the content and its sources", r.stdout)
	}
	var v2 imprint.Memory
	if err := json.Unmarshal([]byte(mustRun("memories", "edit", old.ID, "Mara lives in Lisbon now", "--json").stdout), &v2); err != nil {
		t.Fatal(err)
	}
	if v2.Version != old.Version+1 || len(v2.Supersedes) != 1 || v2.Supersedes[0] != old.ID {
		t.Errorf("edit --json = %+v, want a version superseding %s", v2, old.ID)
	}
	if r := run("memories", "edit", old.ID, "again"); r.code != 2 && r.code != 1 {
		t.Errorf("edit of a superseded version: exit %d", r.code)
	}
	mustRun("memories", "forget", v2.ID)
	for _, l := range jsonLines[imprint.Memory](t, mustRun("memories", "--json", "--limit", "0")) {
		if l.ID == v2.ID || l.ID == old.ID {
			t.Errorf("forgotten %s still listed", l.ID)
		}
	}
	if r := mustRun("search", "--kind", "memory", "--json", "Lisbon now"); strings.Contains(r.stdout, v2.ID) {
		t.Errorf("search finds the forgotten memory: %s", r.stdout)
	}
	// Without --yes a bulk forget counts what it would forget (the
	// session's live memories: all extracted but the edited one) and
	// forgets nothing.
	wouldForget := func(n int) {
		t.Helper()
		want := fmt.Sprintf("would forget %d memories; add --yes", n)
		if r := run("forget", "--session", "example-mara"); r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("forget without --yes: exit %d %q, want 2 saying %q", r.code, r.stderr, want)
		}
	}
	wouldForget(len(extracted) - 1)
	if got := len(jsonLines[imprint.Memory](t, mustRun("memories", "--json", "--limit", "0", "--session", "example-mara"))); got != len(extracted)-1 {
		t.Errorf("after forget without --yes %d memories of the session are listed, want %d", got, len(extracted)-1)
	}
	if r := run("forget", "--yes"); r.code != 2 {
		t.Errorf("forget without a selection: exit %d, want 2", r.code)
	}

	// A purge with imprint serve holding the data dir goes through it.
	srv, err := startServe(imprintBin(t), dir, map[string]string{"IMPRINT_EXTRACTION_IDLE": "1h"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.kill()
	victim := extracted[len(extracted)-1]
	src := victim.SourceMessageIDs[0]
	r := mustRun("memories", "forget", victim.ID, "--purge", "--with-sources", "--json")
	var pr imprint.PurgeResult
	if err := json.Unmarshal([]byte(r.stdout), &pr); err != nil || len(pr.MemoryIDs) == 0 || len(pr.MessageIDs) == 0 {
		t.Fatalf("purge --json = %q (%v), want the purged ids", r.stdout, err)
	}
	// The service logs the purge after it answered: wait for the line.
	waitFor(t, "the running service logs the purge", func() bool {
		return strings.Contains(srv.stderr.String(), "memory purged")
	})
	for _, sub := range []string{"records", "conversations"} {
		files, _ := filepath.Glob(filepath.Join(dir, sub, "*.jsonl"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if strings.Contains(string(b), `"`+victim.ID+`"`) || (sub == "conversations" && strings.Contains(string(b), `"id":"`+src+`"`)) {
				t.Errorf("%s still holds the purged memory or its source", f)
			}
		}
	}
	if r := run("memories", "show", victim.ID); r.code != 2 {
		t.Errorf("show of a purged memory: exit %d", r.code)
	}
	wouldForget(len(extracted) - 2) // counted by the service
	r = mustRun("forget", "--session", "example-mara", "--yes", "--json")
	var n map[string]int
	if err := json.Unmarshal([]byte(r.stdout), &n); err != nil || n["forgotten"] != len(extracted)-2 {
		t.Errorf("forget --session --yes = %q, want %d forgotten", r.stdout, len(extracted)-2)
	}
}

// TestManageThroughServiceNeedsItsToken: when the imprint serve holding
// the data dir needs a token, a memory command without one says where it
// went and how to give it; with the token it works.
func TestManageThroughServiceNeedsItsToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := startServe(imprintBin(t), dir, map[string]string{"IMPRINT_SERVER_API_TOKEN": "s3cret-token-for-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.kill()
	r := runBin(t, map[string]string{"IMPRINT_DATA_DIR": dir}, "", "remember", "Ada likes tea")
	if r.code == 0 || !strings.Contains(r.stderr, "holds the data dir") || !strings.Contains(r.stderr, "--token") {
		t.Errorf("remember without the token: exit %d %q, want a failure naming the service and --token", r.code, r.stderr)
	}
	r = runBin(t, map[string]string{"IMPRINT_DATA_DIR": dir, "IMPRINT_API_TOKEN": "s3cret-token-for-test"}, "", "remember", "Ada likes tea")
	if r.code != 0 || !strings.Contains(r.stdout, "remembered") {
		t.Errorf("remember with the token: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
}
