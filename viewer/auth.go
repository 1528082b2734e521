package viewer

import (
	"net/http"
	"strings"
	"unicode"

	imprint "github.com/imprint-dev/imprint"
)

// keyCookieMaxAge is how long the browser keeps the key: a working week.
const keyCookieMaxAge = 7 * 24 * 3600

// askKey answers a request without valid credentials with the page that
// asks for a key (401). A cookie the API did not accept is dropped.
func (h *Handler) askKey(w http.ResponseWriter, r *http.Request, msg string) {
	v := &view{Title: "Sign in", Status: http.StatusUnauthorized, Error: msg, Data: r.URL.RequestURI()}
	if _, err := r.Cookie(imprint.ViewerCookie); err == nil && msg == "" {
		v.Error = "The key kept by this browser was not accepted (revoked, or not a key of this server). Give another one."
		clearKey(w, r)
	}
	if r.URL.Path == "/login" {
		v.Data = "/"
	}
	if err := h.render(w, "login", v); err != nil {
		http.Error(w, "sign in: "+err.Error(), http.StatusInternalServerError)
	}
}

// loginPage shows the key form, or goes home when the caller is known.
func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := imprint.CallerOf(r.Context()); ok {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	h.askKey(w, r, "")
}

// login keeps the key given in the form in an HttpOnly, SameSite=Strict
// cookie and goes back to the page asked for; the API checks the key on
// the next request.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSpace(r.PostFormValue("key"))
	if key == "" {
		h.askKey(w, r, "Give an API key (imp_…) or the admin token.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: imprint.ViewerCookie, Value: key, Path: "/", MaxAge: keyCookieMaxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, localPath(r.PostFormValue("next")), http.StatusSeeOther)
}

// logout drops the key.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	clearKey(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func clearKey(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: imprint.ViewerCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// localPath keeps a redirect target on this server: a path of ours, never
// another host ("//evil", "/\\evil", "https://…"). Browsers drop tabs and
// line breaks from a URL and read a backslash as a slash, so a target with
// any control character or backslash is refused too.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/login") ||
		strings.ContainsFunc(p, func(r rune) bool { return r == '\\' || unicode.IsControl(r) }) {
		return "/"
	}
	return p
}
