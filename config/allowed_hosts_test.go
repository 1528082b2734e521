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
