package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mcpClientDir holds the MCP end-to-end client and its node_modules
// (scripts/install-mcp-e2e.sh).
var mcpClientDir = filepath.Join("..", "..", "e2e", "mcp")

// mcpClient returns the node binary and the client script, skipping the
// test when they are not installed, or failing it under CI=true.
func mcpClient(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(mcpClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the MCP end-to-end client is not installed (run scripts/install-mcp-e2e.sh): %v", err)
		}
		t.Skipf("the MCP end-to-end client is not installed (scripts/install-mcp-e2e.sh): %v", err)
	}
	script, err = filepath.Abs(filepath.Join(mcpClientDir, "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return node, script
}

// mcpRun is what the TypeScript client saw.
type mcpRun struct {
	Server         struct{ Name, Version string }
	Tools          []string
	RememberAction string `json:"remember_action"`
	Memory         struct {
		ID, Content, Type, Extractor, Workspace string
		Scope                                   struct{ Tenant, User, Agent string }
	}
	SearchIDs         []string `json:"search_ids"`
	RecallContext     string   `json:"recall_context"`
	ResourceText      string   `json:"resource_text"`
	ForgetAction      string   `json:"forget_action"`
	SearchAfterForget []string `json:"search_ids_after_forget"`
	RecallAfterForget string   `json:"recall_context_after_forget"`
	ShownAfterForget  struct {
		ID          string
		ForgottenAt *string `json:"forgotten_at"`
	} `json:"shown_after_forget"`
	Recorded struct {
		RecordedCount int `json:"recorded_count"`
	}
	Ended struct {
		PendingMessages int  `json:"pending_messages"`
		Extracted       bool `json:"extracted"`
		MemoriesStored  int  `json:"memories_stored"`
	}
	InstructionsText string `json:"instructions_text"`
	BadArgument      struct {
		IsError bool `json:"is_error"`
		Text    string
	} `json:"bad_argument"`
}

func runMCPClient(t *testing.T, node, script string, args ...string) mcpRun {
	t.Helper()
	cmd := exec.Command(node, append([]string{script}, args...)...)
	cmd.Dir = filepath.Dir(script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs %s: %v\nstdout: %s\nstderr: %s", args[0], err, stdout.String(), stderr.String())
	}
	var run mcpRun
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		t.Fatalf("client output %q: %v\nstderr: %s", stdout.String(), err, stderr.String())
	}
	return run
}

// checkMCPRun checks what a host sees: the tools, a fact remembered,
// found, recalled and read as a resource, then forgotten and gone.
func checkMCPRun(t *testing.T, run mcpRun, user string, inProcess bool) {
	t.Helper()
	want := []string{"end_session", "forget", "get_memory", "list_memories", "list_traces", "recall", "record_messages", "remember", "search"}
	if run.Server.Name != "imprint" || !slices.Equal(run.Tools, want) {
		t.Errorf("server %+v lists tools %v, want %v", run.Server, run.Tools, want)
	}
	if run.InstructionsText == "" {
		t.Errorf("imprint://instructions before anything is remembered: no text")
	}
	m := run.Memory
	if run.RememberAction != "store" || m.ID == "" || m.Type != "persona" || m.Extractor != "manual" || m.Scope.User != user {
		t.Fatalf("remember: %s %+v", run.RememberAction, m)
	}
	if m.Workspace != "/work/projects/tea-shop" {
		t.Errorf("remembered in workspace %q, want the client's root /work/projects/tea-shop", m.Workspace)
	}
	if !slices.Contains(run.SearchIDs, m.ID) {
		t.Errorf("search found %v, want the remembered %s", run.SearchIDs, m.ID)
	}
	if !strings.Contains(run.RecallContext, "jasmine") {
		t.Errorf("recall context %q does not hold the fact", run.RecallContext)
	}
	if !strings.Contains(run.ResourceText, m.ID) || !strings.Contains(run.ResourceText, "jasmine") {
		t.Errorf("memory resource %q", run.ResourceText)
	}
	if run.ForgetAction != "forget" || slices.Contains(run.SearchAfterForget, m.ID) || strings.Contains(run.RecallAfterForget, "jasmine") {
		t.Errorf("after forget (%s): search %v, recall %q: want the fact gone", run.ForgetAction, run.SearchAfterForget, run.RecallAfterForget)
	}
	if run.ShownAfterForget.ID != m.ID || run.ShownAfterForget.ForgottenAt == nil {
		t.Errorf("get_memory after forget: %+v, want it marked forgotten", run.ShownAfterForget)
	}
	if run.Recorded.RecordedCount != 2 || run.Ended.PendingMessages != 2 || run.Ended.Extracted != inProcess ||
		(inProcess && run.Ended.MemoriesStored == 0) {
		t.Errorf("record_messages %+v then end_session %+v: want 2 messages pending, extracted in process: %v", run.Recorded, run.Ended, inProcess)
	}
	if !run.BadArgument.IsError || !strings.Contains(run.BadArgument.Text, "kind") {
		t.Errorf("a bad kind: %+v, want a tool error naming kind", run.BadArgument)
	}
}

// TestMCPTypeScriptSDK: the official TypeScript SDK, a client nobody here
// wrote, drives the built binary over stdio (imprint mcp on the local
// database), over streamable HTTP (/mcp of imprint serve) and on stdio
// through that service (imprint mcp --server).
func TestMCPTypeScriptSDK(t *testing.T) {
	node, script := mcpClient(t)
	bin := imprintBin(t)

	t.Run("stdio", func(t *testing.T) {
		dir := t.TempDir()
		checkMCPRun(t, runMCPClient(t, node, script, "stdio", bin, dir), "ana", true)
	})

	t.Run("http", func(t *testing.T) {
		dir := t.TempDir()
		const token = "e2e-admin-token"
		p, err := startServe(bin, dir, map[string]string{"IMPRINT_SERVER_API_TOKEN": token})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.kill)
		checkMCPRun(t, runMCPClient(t, node, script, "http", p.URL+"/mcp?tenant=acme&user=ana", token), "ana", false)
		// imprint mcp on stdio through the same service (--server), as
		// another agent of the same user.
		checkMCPRun(t, runMCPClient(t, node, script, "stdio", bin, t.TempDir(), "--tenant", "acme", "--agent", "desktop", "--server", p.URL, "--token", token), "ana", false)
	})
}
