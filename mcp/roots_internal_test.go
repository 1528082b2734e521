package mcp

import (
	"context"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	imprint "github.com/imprint-dev/imprint"
)

// TestRootsWorkspace: the first folder root the client offers is the
// session's workspace, asked at the first tool call (a multi round-trip
// request) and again after the client says its roots changed; a client
// without roots works in none. The recording, recall and remember tools
// carry it (workspace_test.go shows it on the records).
func TestRootsWorkspace(t *testing.T) {
	t.Parallel()
	s, err := New(Deps{}, Config{Scope: imprint.DefaultScope()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	connect := func(c *sdk.Client) (*sdk.ServerSession, *sdk.ClientSession) {
		t.Helper()
		ct, stt := sdk.NewInMemoryTransports()
		ss, err := s.Connect(ctx, stt)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := c.Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close(); ss.Close() })
		return ss, cs
	}
	workspace := func(ss *sdk.ServerSession, cs *sdk.ClientSession) string {
		t.Helper()
		// Any tool call asks for the roots first; this one then fails for
		// want of a search, which does not matter here.
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search", Arguments: map[string]any{"query": "x"}}); err != nil {
			t.Fatal(err)
		}
		c, err := s.callOf(ss)
		if err != nil {
			t.Fatal(err)
		}
		return c.workspace
	}

	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil)
	client.AddRoots(&sdk.Root{URI: "https://example.com/not-a-folder"}, &sdk.Root{URI: "file:///work/tea-shop", Name: "tea-shop"})
	ss, cs := connect(client)
	if ws := workspace(ss, cs); ws != "/work/tea-shop" {
		t.Fatalf("workspace %q, want the first folder root /work/tea-shop", ws)
	}
	client.RemoveRoots("file:///work/tea-shop")
	client.AddRoots(&sdk.Root{URI: "file:///work/bakery"})
	got := ""
	for range 50 { // the list-changed notification arrives on its own
		if got = workspace(ss, cs); got == "/work/bakery" {
			break
		}
	}
	if got != "/work/bakery" {
		t.Fatalf("after the roots changed the workspace is %q, want /work/bakery", got)
	}

	plainSS, plainCS := connect(sdk.NewClient(&sdk.Implementation{Name: "plain", Version: "1"}, nil))
	if ws := workspace(plainSS, plainCS); ws != "" {
		t.Fatalf("a client without roots has workspace %q", ws)
	}
}

func TestRootFolder(t *testing.T) {
	t.Parallel()
	for uri, want := range map[string]string{
		"file:///home/ana/proj":       "/home/ana/proj",
		"file:///home/ana/my%20proj/": "/home/ana/my proj",
		"file:///a/../b":              "/b",
		"https://example.com/x":       "",
		"file://":                     "",
		"file:///a%0Ab":               "",
		"::not a uri":                 "",
	} {
		if got := rootFolder(uri); got != want {
			t.Errorf("rootFolder(%q) = %q, want %q", uri, got, want)
		}
	}
}

// FuzzRootFolder: whatever URI a client sends as a root, the workspace is
// none or a clean absolute folder that is a valid id.
func FuzzRootFolder(f *testing.F) {
	for _, s := range []string{"file:///home/ana/proj", "file:///a/../../b/", "file://host/x", "file:///a%00b", "file:///%ff", "x:y", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		ws := rootFolder(uri)
		if ws == "" {
			return
		}
		if err := imprint.ValidateID("workspace", ws); err != nil {
			t.Fatalf("rootFolder(%q) = %q: %v", uri, ws, err)
		}
		if ws[0] != '/' || filepath.Clean(ws) != ws {
			t.Fatalf("rootFolder(%q) = %q: not a clean absolute folder", uri, ws)
		}
	})
}
