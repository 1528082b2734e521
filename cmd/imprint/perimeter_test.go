package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeClosesIdleConnections checks server.idle_timeout: a keep-alive
// connection left idle after its answer is closed by the server.
func TestServeClosesIdleConnections(t *testing.T) {
	t.Parallel()
	s := startInProc(t, t.TempDir(), map[string]string{"IMPRINT_SERVER_IDLE_TIMEOUT": "300ms"})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("healthz: %d, close %v: want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	// The read ends when the server closes the connection; the deadline
	// only keeps a regression from hanging the test.
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := br.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the idle connection is still open 20s after its answer (server.idle_timeout 300ms)")
	}
	if !errors.Is(err, io.EOF) || n != 0 {
		t.Fatalf("read on the idle connection: %d bytes, %v; want EOF (closed by the server)", n, err)
	}
}

// TestServeRefusesOtherHosts checks the DNS-rebinding defence of imprint
// serve: a request naming another host is 421 and writes nothing; a name in
// server.allowed_hosts is served.
func TestServeRefusesOtherHosts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startInProc(t, dir, map[string]string{"IMPRINT_SERVER_ALLOWED_HOSTS": "memory.team.example, *.corp.example"})
	body := `{"session_id":"rebound","messages":[{"role":"user","content":"planted"}]}`
	post := func(host string) int {
		req, err := http.NewRequest("POST", s.URL+"/v1/messages", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, h := range []string{"attacker.example:8420", "corp.example", "memory.team.example.attacker.example"} {
		if got := post(h); got != http.StatusMisdirectedRequest {
			t.Errorf("Host %s: %d, want 421", h, got)
		}
	}
	if got := storedMessages(t, dir, "rebound"); len(got) != 0 {
		t.Fatalf("requests to other hosts wrote %v", got)
	}
	for _, h := range []string{"memory.team.example", "ci.corp.example:443"} {
		if got := post(h); got != http.StatusOK {
			t.Errorf("allowed Host %s: %d, want 200", h, got)
		}
	}
}

// TestServeWarnsOfNoAllowedHosts checks the startup warning of a server on
// a non-loopback address without server.allowed_hosts, and that it still
// serves the address it was reached at.
func TestServeWarnsOfNoAllowedHosts(t *testing.T) {
	t.Parallel()
	s := startInProc(t, t.TempDir(), map[string]string{"IMPRINT_SERVER_ADDR": "0.0.0.0:0", "IMPRINT_SERVER_API_TOKEN": "s3cret"})
	if !strings.Contains(s.stderr.String(), "warning: server.allowed_hosts is empty") {
		t.Errorf("no warning about server.allowed_hosts on a non-loopback address:\n%s", s.stderr.String())
	}
	_, port, err := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:" + port
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("healthz on %s: %d", url, resp.StatusCode)
	}
}
