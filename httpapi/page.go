package httpapi

import (
	"bytes"
	"html/template"
	"net/http"
	"sort"

	imprint "github.com/imprint-dev/imprint"
)

// pageTmpl is the status page until the web viewer exists. html/template
// escapes every value, so record ids and errors cannot inject markup.
var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>imprint</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: .5rem 0 1.5rem; }
th, td { text-align: left; padding: .2rem .8rem .2rem 0; border-bottom: 1px solid #ddd; }
code { background: #f4f4f4; padding: 0 .2rem; }
.muted { color: #777; }
</style>
</head>
<body>
<h1>imprint</h1>
<p class="muted">Scope <code>{{.Scope.Tenant}}/{{.Scope.User}}/{{.Scope.Agent}}</code> ·
<a href="{{.StatusURL}}">status JSON</a> · <a href="/metrics">metrics</a> · <a href="/healthz">health</a></p>

<h2>Extraction</h2>
<p>{{.Status.PendingMessages}} pending message(s) in {{len .Status.Sessions}} session(s).</p>
{{if .Status.Sessions}}<table>
<tr><th>session</th><th>pending</th><th>last extracted</th></tr>
{{range .Status.Sessions}}<tr><td><code>{{.SessionID}}</code></td><td>{{.PendingMessages}}</td><td>{{if .LastExtractedAt.IsZero}}<span class="muted">never</span>{{else}}{{.LastExtractedAt}}{{end}}</td></tr>
{{end}}</table>{{end}}

<h2>Jobs</h2>
<table>
<tr><th>available</th><th>running</th><th>retryable</th><th>failed</th></tr>
<tr><td>{{.Status.Jobs.Available}}</td><td>{{.Status.Jobs.Running}}</td><td>{{.Status.Jobs.Retryable}}</td><td>{{.Status.Jobs.Failed}}</td></tr>
</table>
{{if .Status.FailedJobs}}<h3>Failed jobs</h3><table>
<tr><th>kind</th><th>session</th><th>attempts</th><th>last error</th></tr>
{{range .Status.FailedJobs}}<tr><td>{{.Kind}}</td><td><code>{{.SessionID}}</code></td><td>{{.Attempts}}</td><td>{{.LastError}}</td></tr>
{{end}}</table>{{end}}

<h2>LLM calls</h2>
{{if .Ops}}<table>
<tr><th>op</th><th>calls</th><th>prompt tokens</th><th>completion tokens</th><th>errors</th></tr>
{{range .Ops}}<tr><td><code>{{.Op}}</code></td><td>{{.Calls}}</td><td>{{.PromptTokens}}</td><td>{{.CompletionTokens}}</td><td>{{.Errors}}</td></tr>
{{end}}</table>{{else}}<p class="muted">None yet.</p>{{end}}
</body>
</html>
`))

type pageOp struct {
	Op string
	OpUsage
}

type pageData struct {
	Scope     imprint.Scope
	StatusURL string
	Status    Status
	Ops       []pageOp
}

// getPage serves the HTML status page of the scope in the query.
func (s *Server) getPage(w http.ResponseWriter, r *http.Request) error {
	scope, err := queryScope(r)
	if err != nil {
		return err
	}
	st, err := s.status(r.Context(), scope)
	if err != nil {
		return err
	}
	d := pageData{Scope: scope, StatusURL: "/v1/status?" + scopeQuery(scope).Encode(), Status: st}
	for op, u := range st.LLM {
		d.Ops = append(d.Ops, pageOp{Op: op, OpUsage: u})
	}
	sort.Slice(d.Ops, func(i, j int) bool { return d.Ops[i].Op < d.Ops[j].Op })
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, d); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	_, _ = w.Write(buf.Bytes())
	return nil
}
