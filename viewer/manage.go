package viewer

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// The viewer's own form routes for memory management. They call the same
// imprint.Memories as PATCH and DELETE /v1/memories/{id}; the HTTP API in
// front has checked the origin (a form of another site is refused) and
// the caller (a read-only key cannot post).

// editMemory writes the form's text as a new version of the memory and
// shows it.
func (h *Handler) editMemory(w http.ResponseWriter, r *http.Request, v *view) error {
	if h.d.Memories == nil {
		return fmt.Errorf("edit memory: this server runs without memory management")
	}
	id := r.PathValue("id")
	m, err := h.d.Memories.Edit(r.Context(), imprint.EditRequest{Scope: v.Scope, ID: id,
		Content: r.PostFormValue("content"), Type: imprint.MemoryType(strings.TrimSpace(r.PostFormValue("type")))})
	if err != nil {
		return fmt.Errorf("edit memory %s: %w", id, err)
	}
	http.Redirect(w, r, v.Link("/memories/"+url.PathEscape(m.ID), "done", doneSaved, "v", strconv.Itoa(m.Version)), http.StatusSeeOther)
	return nil
}

// forgetMemory retires the memory once the form confirms it, and goes
// back to the list, where it is no longer shown.
func (h *Handler) forgetMemory(w http.ResponseWriter, r *http.Request, v *view) error {
	if h.d.Memories == nil {
		return fmt.Errorf("forget memory: this server runs without memory management")
	}
	id := r.PathValue("id")
	if r.PostFormValue("confirm") != "yes" {
		http.Redirect(w, r, v.Link("/memories/"+url.PathEscape(id), "confirm", "forget"), http.StatusSeeOther)
		return nil
	}
	if _, err := h.d.Memories.Forget(r.Context(), v.Scope, id); err != nil {
		return fmt.Errorf("forget memory %s: %w", id, err)
	}
	http.Redirect(w, r, v.Link("/memories", "done", doneForgotten), http.StatusSeeOther)
	return nil
}

// The notices a management form redirects with (?done=CODE): a code, never
// text, so a link cannot make the page say what it likes.
const (
	doneSaved     = "saved"     // with v=N, the version saved
	doneForgotten = "forgotten" // the memory was forgotten
)

// notice is the page notice of the query's done code; "" for none or an
// unknown one.
func notice(q url.Values) string {
	switch q.Get("done") {
	case doneSaved:
		if n, err := strconv.Atoi(q.Get("v")); err == nil && n > 0 {
			return fmt.Sprintf("Saved as version %d; the earlier text is in the history.", n)
		}
		return "Saved; the earlier text is in the history."
	case doneForgotten:
		return "Forgotten; the memory is no longer listed."
	}
	return ""
}
