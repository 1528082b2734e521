package node_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/node"
)

// TestNodeImportSearchRebuild builds a node from the default configuration
// the way imprint does, without the CLI: a Claude Code transcript imported
// through it is found by its search on the data dir, is still found by a
// second node on the same data dir after a rebuild from the shards, and
// the rebuild keeps the previous database beside the new one.
func TestNodeImportSearchRebuild(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	cfg, err := config.Load(config.Source{DataDir: dir, DataDirSet: true, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	scope := imprint.DefaultScope()
	n := node.New(cfg, nil)
	sum, err := n.Import(ctx, ingest.Options{Format: "auto", TZ: "UTC", Scope: scope, SourceAgents: true},
		[]string{testfiles.Path(t, "claude-code/session_b.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	if sum.MessagesRecorded == 0 {
		t.Fatalf("import recorded nothing: %+v", sum)
	}
	// A Claude Code transcript's records belong to the agent claude-code
	// when no agent was chosen.
	scope.Agent = "claude-code"
	find := func(n *node.Node) int {
		t.Helper()
		hits, err := n.Access(nil).Search(ctx, imprint.SearchQuery{Scope: scope, Text: "session divider", Kinds: []imprint.Kind{imprint.KindMessage}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}
	if find(n) == 0 {
		t.Fatal("search finds nothing of the imported transcript")
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	again := node.New(cfg, nil)
	defer again.Close()
	res, err := again.Rebuild(ctx, func(err error) { t.Errorf("the current database could not be read: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Rebuilt.Messages != sum.MessagesRecorded || !res.CarriedOver {
		t.Errorf("rebuild = %+v, want the %d imported messages and the rest carried over", res, sum.MessagesRecorded)
	}
	if _, err := os.Stat(filepath.Join(dir, node.RebuildBackup)); err != nil {
		t.Errorf("previous database not kept: %v", err)
	}
	if find(again) == 0 {
		t.Error("search finds nothing after the rebuild")
	}
}
