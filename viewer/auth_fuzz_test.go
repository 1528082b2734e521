package viewer

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzLocalPath: whatever the sign-in form's next field holds, the
// redirect stays on this server: a path that a browser resolves against
// our origin, never another host.
func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"/", "/memories?tenant=a", "//evil.example/", "/\\evil.example", "https://evil.example/",
		"/login?next=//x", "", "javascript:alert(1)", "/%2F%2Fevil", "/\r\nSet-Cookie: x=y", " /memories", "/\t/evil"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := localPath(next)
		if !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") || strings.HasPrefix(got, "/\\") || strings.ContainsAny(got, "\r\n") {
			t.Fatalf("localPath(%q) = %q: not a path of this server", next, got)
		}
		// What a browser does with it: tabs and line breaks dropped, a
		// backslash read as a slash.
		browser := strings.NewReplacer("\t", "", "\n", "", "\r", "", "\\", "/").Replace(got)
		if strings.HasPrefix(browser, "//") {
			t.Fatalf("localPath(%q) = %q, which a browser reads as %q: another host", next, got, browser)
		}
		base, _ := url.Parse("http://127.0.0.1:8420/login")
		u, err := base.Parse(got)
		if err == nil && u.Host != base.Host {
			t.Fatalf("localPath(%q) = %q resolves to host %q", next, got, u.Host)
		}
	})
}
