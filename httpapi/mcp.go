package httpapi

import (
	"net/http"

	imprint "github.com/imprint-dev/imprint"
)

// mcpPath is where Deps.MCP is served.
const mcpPath = "/mcp"

// mcpStream reports whether r opens the MCP endpoint's long-lived event
// stream (GET), which the request timeout does not bound.
func mcpStream(r *http.Request) bool {
	return r.URL.Path == mcpPath && r.Method == http.MethodGet
}

// serveMCP hands an authenticated request to the MCP handler with its
// caller (imprint.Caller), which the handler restricts the scope it is
// asked for to, as every other route does.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	s.d.MCP.ServeHTTP(w, r.WithContext(imprint.WithCaller(r.Context(), imprint.Caller{Key: principalOf(r).key})))
}
