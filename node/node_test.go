package node_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
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

// TestImportUnopenedStoreSpendsNoEmbeddings imports with a remote
// embedder (an OpenAI-compatible fake) into a PostgreSQL store that cannot
// be reached (its server never answers): the import fails, and the
// embedder was never called. The
// messages of the first sources are prepared while the store opens only
// with a local embedder.
func TestImportUnopenedStoreSpendsNoEmbeddings(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer fake.Close()
	// A server that accepts connections and never answers: the store's
	// open waits for its connect_timeout, long enough for the sources to
	// be read.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	addr := l.Addr().String()
	env := map[string]string{
		"IMPRINT_STORE":              "postgres://imprint@" + addr + "/imprint?connect_timeout=2",
		"IMPRINT_EMBEDDING_PROVIDER": "openai",
		"IMPRINT_EMBEDDING_BASE_URL": fake.URL + "/v1",
		"IMPRINT_EMBEDDING_API_KEY":  "k",
		"IMPRINT_EMBEDDING_MODEL":    "m",
	}
	cfg, err := config.Load(config.Source{DataDir: t.TempDir(), DataDirSet: true, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	n := node.New(cfg, nil)
	defer n.Close()
	_, err = n.Import(context.Background(), ingest.Options{Format: "auto", TZ: "UTC", Scope: imprint.DefaultScope()},
		[]string{testfiles.Path(t, "locomo/locomo-2conv.json")})
	if err == nil {
		t.Fatal("import into an unreachable store succeeded")
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the embedder was called %d times by an import whose store never opened", n)
	}
}
