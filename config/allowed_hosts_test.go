package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConfigAllowedHostsList checks that server.allowed_hosts is a list in
// the file and comma-separated in the environment.
func TestConfigAllowedHostsList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "imprint.yaml", "server:\n  allowed_hosts:\n    - memory.example\n    - \"*.team.example\"\n")
	c := mustLoad(t, nil, "", dir)
	if diff := cmp.Diff([]string{"memory.example", "*.team.example"}, c.Server.AllowedHosts); diff != "" {
		t.Errorf("from the file (-want +got):\n%s", diff)
	}
	c = mustLoad(t, map[string]string{"IMPRINT_SERVER_ALLOWED_HOSTS": " a.example,, b.example "}, "", dir)
	if diff := cmp.Diff([]string{"a.example", "b.example"}, c.Server.AllowedHosts); diff != "" {
		t.Errorf("from the environment (-want +got):\n%s", diff)
	}
	writeFile(t, dir, "imprint.yaml", "server:\n  allowed_hosts:\n    - [nested]\n")
	if _, err := load(t, nil, "", dir); err == nil || !strings.Contains(err.Error(), "server.allowed_hosts") {
		t.Errorf("a nested list: %v, want an error naming server.allowed_hosts", err)
	}
}

// TestHostsWarning: serve warns about an empty server.allowed_hosts only
// on a non-loopback address, naming the variable that sets it.
func TestHostsWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr  string
		hosts []string
		warn  bool
	}{
		{"127.0.0.1:8420", nil, false},
		{"localhost:8420", nil, false},
		{"[::1]:8420", nil, false},
		{":8420", nil, true},
		{"0.0.0.0:8420", nil, true},
		{"0.0.0.0:8420", []string{"memory.example"}, false},
	} {
		c := &Config{Server: ServerConfig{Addr: tc.addr, AllowedHosts: tc.hosts}}
		w := c.HostsWarning()
		if (w != "") != tc.warn || (tc.warn && !strings.Contains(w, "IMPRINT_SERVER_ALLOWED_HOSTS")) {
			t.Errorf("HostsWarning for %s %v = %q, want a warning: %v", tc.addr, tc.hosts, w, tc.warn)
		}
	}
}
