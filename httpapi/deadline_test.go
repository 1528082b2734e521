package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSlowBodyIsCutOff checks that a client that sends its headers and then
// stalls in the middle of the body gets an answer within the request
// timeout instead of holding a handler forever.
func TestSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{RequestTimeout: 200 * time.Millisecond})
	before := e.counts()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"session_id":"s1","messages":[{"role":"user","content":"hello"}]}`
	if _, err := conn.Write([]byte("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
		"Content-Length: 500\r\n\r\n" + body)); err != nil {
		t.Fatal(err)
	}
	// The rest of the 500 bytes never comes. The answer must, well within
	// the 10 s the test allows.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Fatalf("stalled body answered %d, want an error", resp.StatusCode)
	}
	e.unchanged(before, "a stalled body")
}
