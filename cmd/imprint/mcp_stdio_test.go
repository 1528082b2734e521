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

// TestMCPStdioStdoutIsProtocol: on stdio, stdout carries only the
// protocol. The built binary runs `imprint mcp --log-level debug` (the
// loudest logging) through initialize, tools/list and a tools/call; every
// stdout line is a JSON-RPC 2.0 message and the logs go to stderr.
func TestMCPStdioStdoutIsProtocol(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(imprintBin(t), "mcp", "--data-dir", dir, "--user", "ana", "--log-level", "debug")
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
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
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stdout-test","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"remember","arguments":{"text":"Ana drinks jasmine tea.","type":"persona"}}}`,
	}
	if _, err := io.WriteString(stdin, strings.Join(requests, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	// Read until the three requests are answered, then end the session.
	var lines []string
	answered := map[float64]bool{}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for len(answered) < 3 && sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      any             `json:"id"`
			Method  string          `json:"method"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" ||
			(msg.Method == "" && msg.Result == nil && msg.Error == nil) {
			t.Fatalf("stdout line %q is not a JSON-RPC message (%v)\nstderr: %s", line, err, stderr.String())
		}
		if id, ok := msg.ID.(float64); ok && msg.Method == "" {
			if msg.Error != nil {
				t.Errorf("request %v answered with an error: %s", id, msg.Error)
			}
			answered[id] = true
		}
	}
	stdin.Close()
	rest, _ := io.ReadAll(out)
	werr := cmd.Wait()
	for _, line := range strings.Split(strings.TrimSpace(string(rest)), "\n") {
		if line == "" {
			continue
		}
		lines = append(lines, line)
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg["jsonrpc"] != "2.0" {
			t.Errorf("stdout line %q after the session is not a JSON-RPC message (%v)", line, err)
		}
	}
	if len(answered) < 3 {
		t.Fatalf("answered %v of requests 1-3; stdout %q; exit %v\nstderr: %s", answered, lines, werr, stderr.String())
	}
	if werr != nil {
		t.Errorf("imprint mcp exited with %v after stdin closed\nstderr: %s", werr, stderr.String())
	}
	if strings.TrimSpace(stderr.String()) == "" {
		t.Error("stderr is empty at --log-level debug: the logs went elsewhere")
	}
}
