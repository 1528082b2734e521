package viewer_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint/httpapi"
)

// post sends a form as the viewer's own page does.
func (e *env) post(path string, form url.Values, h ...string) page {
	e.t.Helper()
	return e.send("POST", path, strings.NewReader(form.Encode()), append([]string{"Content-Type", "application/x-www-form-urlencoded",
		"Sec-Fetch-Site", "same-origin", "Origin", e.ts.URL}, h...)...)
}

// Editing a memory through the viewer's form writes a new version whose
// history holds the old text; forgetting asks first, then the memory is
// gone from the list, the search and the recall, and stays readable by id.
func TestEditAndForget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	seed(t, e.db)
	sc := q(scopeA)

	p := e.post("/memories/mem-trip/edit"+sc, url.Values{"content": {"User booked a flight to Porto on 21 May"}, "type": {"episodic"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("POST edit: %d\n%s", p.status, p.body)
	}
	loc := p.header.Get("Location")
	if !strings.HasPrefix(loc, "/memories/") || strings.HasPrefix(loc, "/memories/mem-trip?") {
		t.Fatalf("edit went to %q, want the new version's page", loc)
	}
	p = e.get(loc)
	has(t, "the edited memory's page", p, "User booked a flight to Porto on 21 May", "User booked a flight to Lisbon on 20 May", "Saved as version 2", "manual")
	newID := strings.TrimPrefix(strings.Split(loc, "?")[0], "/memories/")
	if p := e.get("/memories" + sc); strings.Contains(p.body, "Lisbon on 20 May") || !strings.Contains(p.body, "Porto on 21 May") {
		t.Errorf("the list after the edit shows the old text or lacks the new:\n%s", p.body)
	}

	// Forget: the link asks first; a post without the confirmation asks again.
	p = e.get("/memories/" + newID + sc + "&confirm=forget")
	has(t, "the forget confirmation", p, `id="forget-form"`, "Forget this memory?")
	if p := e.post("/memories/"+newID+"/forget"+sc, url.Values{}); p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "confirm=forget") {
		t.Errorf("forget without confirmation: %d to %q, want the confirmation", p.status, p.header.Get("Location"))
	}
	if p := e.get("/memories" + sc); !strings.Contains(p.body, "Porto") {
		t.Fatalf("the memory went before it was confirmed")
	}
	p = e.post("/memories/"+newID+"/forget"+sc, url.Values{"confirm": {"yes"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("POST forget: %d\n%s", p.status, p.body)
	}
	p = e.get(p.header.Get("Location"))
	has(t, "the list after forgetting", p, "Forgotten; the memory is no longer listed.")
	if strings.Contains(p.body, "Porto on 21 May") {
		t.Errorf("the forgotten memory is still listed:\n%s", p.body)
	}
	if p := e.get("/search" + sc + "&q=Porto+flight"); strings.Contains(p.body, "Porto on 21 May") {
		t.Errorf("the forgotten memory is still found or recalled:\n%s", p.body)
	}
	has(t, "the forgotten memory's page", e.get("/memories/"+newID+sc), `id="forgotten"`, "Porto on 21 May")

	// Another site's form cannot edit: the perimeter refuses it.
	p = e.send("POST", "/memories/mem-seat/edit"+sc, strings.NewReader("content=planted"), "Content-Type", "application/x-www-form-urlencoded",
		"Sec-Fetch-Site", "cross-site", "Origin", "http://evil.example")
	if p.status != http.StatusForbidden {
		t.Errorf("cross-site edit: %d, want 403", p.status)
	}
	if p := e.get("/memories/mem-seat" + sc); strings.Contains(p.body, "planted") {
		t.Errorf("a cross-site form edited a memory")
	}

	// The notice is a code: free text in done is not shown, on the list
	// or on a memory's page.
	spoof := url.QueryEscape("Your key expired: sign in again at evil.example")
	for _, path := range []string{"/memories" + sc + "&done=" + spoof, "/memories/mem-seat" + sc + "&done=" + spoof, "/memories" + sc + "&done=saved&v=" + spoof} {
		if p := e.get(path); p.status != http.StatusOK || strings.Contains(p.body, "evil.example") || strings.Contains(p.body, "Your key expired") {
			t.Errorf("GET %s: %d, shows the done text:\n%s", path, p.status, p.body)
		}
	}
}
