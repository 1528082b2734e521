package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// mcpInit is the start of a session a host sends on stdio.
var mcpInit = []string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stdio-test","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
}

// rpcLine is one JSON-RPC 2.0 message on stdout.
type rpcLine struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// runMCPStdio runs the built `imprint mcp ARGS` with env, writes requests
// as JSON-RPC lines, reads stdout until the requests with ids 1..answers
// are answered, then closes stdin. Every stdout line must be a JSON-RPC
// message; it returns them by id, with stderr.
func runMCPStdio(t *testing.T, env []string, requests []string, answers int, args ...string) (map[float64]rpcLine, string) {
	t.Helper()
	cmd := exec.Command(imprintBin(t), append([]string{"mcp"}, args...)...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, strings.Join(requests, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	answered := map[float64]rpcLine{}
	check := func(line string) {
		var msg rpcLine
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" ||
			(msg.Method == "" && msg.Result == nil && msg.Error == nil) {
			t.Fatalf("stdout line %q is not a JSON-RPC message (%v)\nstderr: %s", line, err, stderr.String())
		}
		if id, ok := msg.ID.(float64); ok && msg.Method == "" {
			answered[id] = msg
		}
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for len(answered) < answers && sc.Scan() {
		check(sc.Text())
	}
	stdin.Close()
	for sc.Scan() {
		check(sc.Text())
	}
	werr := cmd.Wait()
	if len(answered) < answers {
		t.Fatalf("answered %d of %d requests; exit %v\nstderr: %s", len(answered), answers, werr, stderr.String())
	}
	if werr != nil {
		t.Errorf("imprint mcp exited with %v after stdin closed\nstderr: %s", werr, stderr.String())
	}
	return answered, stderr.String()
}

// TestMCPStdioStdoutIsProtocol: on stdio, stdout carries only the
// protocol. The built binary runs `imprint mcp --log-level debug` (the
// loudest logging) through initialize, tools/list and a tools/call; every
// stdout line is a JSON-RPC 2.0 message and the logs go to stderr.
func TestMCPStdioStdoutIsProtocol(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	got, stderr := runMCPStdio(t, []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}, append(mcpInit,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"remember","arguments":{"text":"Ana drinks jasmine tea.","type":"persona"}}}`,
	), 3, "--data-dir", dir, "--user", "ana", "--log-level", "debug")
	for id, msg := range got {
		if msg.Error != nil {
			t.Errorf("request %v answered with an error: %s", id, msg.Error)
		}
	}
	if strings.TrimSpace(stderr) == "" {
		t.Error("stderr is empty at --log-level debug: the logs went elsewhere")
	}
}

// TestMCPThroughServiceNeedsItsToken: imprint mcp on a data dir held by an
// imprint serve that needs a token, run without one, answers a tool call
// with an error that says how to give the token.
func TestMCPThroughServiceNeedsItsToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := startServe(imprintBin(t), dir, map[string]string{"IMPRINT_SERVER_API_TOKEN": "s3cret-token-for-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.kill()
	got, stderr := runMCPStdio(t, []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}, append(mcpInit,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"tea"}}}`,
	), 2, "--data-dir", dir)
	text := string(got[2].Result)
	if !strings.Contains(text, `"isError":true`) || !strings.Contains(text, "unauthorized") ||
		!strings.Contains(text, "--token") || !strings.Contains(text, "IMPRINT_API_TOKEN") || !strings.Contains(text, "holds the data dir") {
		t.Errorf("search without the token: %s, want a tool error saying to pass --token or set IMPRINT_API_TOKEN\nstderr: %s", text, stderr)
	}
}
