package viewer_test

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/httpapi"
)

var hrefRE = regexp.MustCompile(`href="([^"]*)"`)

// links returns the page's links whose path starts with prefix, as a
// browser would read them from the attribute.
func links(p page, prefix string) []string {
	var out []string
	for _, m := range hrefRE.FindAllStringSubmatch(p.body, -1) {
		if u := html.UnescapeString(m[1]); strings.HasPrefix(u, prefix) {
			out = append(out, u)
		}
	}
	return out
}

// An id holding "?", "#", "/" and "%" stays one path segment in every
// link: following the list's link opens that session or memory, and the
// memory's session link opens its session.
func TestLinksEscapeIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	ctx := context.Background()
	const sid, mid = "a?b#c/d%e", "m?x#y/z%w"
	at := imprint.At(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	if _, err := e.db.AppendMessages(ctx, scopeA, sid, []imprint.Message{
		{ID: "m1", Role: imprint.RoleUser, Content: "Odd session message about ferries", Timestamp: at}}); err != nil {
		t.Fatal(err)
	}
	mem := imprint.Memory{ID: mid, Content: "User takes the ferry to Porto", Type: imprint.MemoryEpisodic, Priority: 50,
		SourceMessageIDs: []string{"m1"}, CreatedAt: at, UpdatedAt: at, Version: 1, SessionID: sid, Scope: scopeA,
		Supersedes: []string{}, Extractor: imprint.ExtractorLLM, ContentHash: "h-odd"}
	if err := e.db.PutMemory(ctx, mem, nil); err != nil {
		t.Fatal(err)
	}
	sc := q(scopeA)
	follow := func(from, prefix, want string) page {
		t.Helper()
		p := e.get(from)
		ls := links(p, prefix)
		if len(ls) == 0 {
			t.Fatalf("GET %s: no link to %s…:\n%s", from, prefix, p.body)
		}
		got := e.get(ls[0])
		if got.status != 200 || !strings.Contains(got.body, want) {
			t.Fatalf("GET %s's link %q: %d, want a page with %q:\n%s", from, ls[0], got.status, want, got.body)
		}
		return got
	}
	follow("/sessions"+sc, "/sessions/", "Odd session message about ferries")
	follow("/memories"+sc, "/memories/", "User takes the ferry to Porto")
	follow("/memories"+sc+"&q=ferry", "/memories/", "User takes the ferry to Porto")
	follow("/search"+sc+"&q=ferry+porto", "/memories/", "User takes the ferry to Porto")
	follow("/"+sc, "/memories/", "User takes the ferry to Porto")
	p := follow("/memories"+sc, "/memories/", "User takes the ferry to Porto")
	if ls := links(p, "/sessions/"); len(ls) == 0 {
		t.Fatalf("the memory's page has no session link:\n%s", p.body)
	} else if s := e.get(ls[0]); s.status != 200 || !strings.Contains(s.body, "Odd session message about ferries") {
		t.Errorf("the memory's session link %q: %d, want its session:\n%s", ls[0], s.status, s.body)
	}
	// The memory page's own forms post to the memory, not to a cut id.
	if !strings.Contains(p.body, `action="/memories/m%3Fx%23y%2Fz%25w/edit`) {
		t.Errorf("the memory's edit form does not post to its escaped path:\n%s", p.body)
	}
	// Forgetting without confirmation goes back to the memory's own
	// confirmation page.
	f := e.send("POST", "/memories/m%3Fx%23y%2Fz%25w/forget"+sc, strings.NewReader(""), "Content-Type", "application/x-www-form-urlencoded",
		"Sec-Fetch-Site", "same-origin", "Origin", e.ts.URL)
	if loc := f.header.Get("Location"); f.status != 303 || !strings.Contains(e.get(loc).body, "User takes the ferry to Porto") {
		t.Errorf("forget without confirmation: %d to %q, want the memory's confirmation page", f.status, loc)
	}
}

// A type filter over a text search fills the page: the search is read
// deeper when the first hits are of other types.
func TestMemoriesTypeFilterAfterSearchFillsPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	ctx := context.Background()
	at := imprint.At(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	put := func(id, content string, typ imprint.MemoryType) {
		t.Helper()
		m := imprint.Memory{ID: id, Content: content, Type: typ, Priority: 50, CreatedAt: at, UpdatedAt: at, Version: 1,
			Scope: scopeA, Supersedes: []string{}, Extractor: imprint.ExtractorLLM, ContentHash: "h-" + id}
		if err := e.db.PutMemory(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 12 {
		put(fmt.Sprintf("p-%02d", i), fmt.Sprintf("Lisbon Lisbon fan %d", i), imprint.MemoryPersona)
	}
	for i := range 3 {
		put(fmt.Sprintf("e-%d", i), fmt.Sprintf("Episode %d: the user once spent a long and rainy weekend in a small hotel near Lisbon with friends", i), imprint.MemoryEpisodic)
	}
	// The first hits of the search are persona memories only, so filtering
	// them alone would leave the page empty.
	hits, err := e.db.SearchText(ctx, imprint.TextQuery{Scope: scopeA, Kind: imprint.KindMemory, Text: "lisbon", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if !strings.HasPrefix(h.ID, "p-") {
			t.Fatalf("the search's first hits include %s; the test needs persona hits first", h.ID)
		}
	}
	p := e.get("/memories" + q(scopeA) + "&q=lisbon&type=episodic&limit=3")
	has(t, "the episodic memories about Lisbon", p, "Episode 0:", "Episode 1:", "Episode 2:")
	if strings.Contains(p.body, "Lisbon Lisbon fan") {
		t.Errorf("the episodic filter shows persona memories:\n%s", p.body)
	}
}
