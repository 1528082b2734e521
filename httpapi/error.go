package httpapi

import (
	"encoding/json"
	"net/http"

	imprint "github.com/imprint-dev/imprint"
)

// Error codes of the API's error bodies.
const (
	CodeInvalid      = "invalid"
	CodeNotFound     = "not_found"
	CodeUnauthorized = "unauthorized"
	CodeForbidden    = "forbidden"
	CodeConflict     = "conflict"
	CodeTooLarge     = "too_large"
	CodeInternal     = "internal"
)

// errorBody is the JSON of every error response:
// {"error": {"code", "message"}}.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// codeOf maps an error to its API code and HTTP status. It is the one place
// where error kinds become statuses.
func codeOf(err error) (string, int) {
	switch imprint.ErrorCode(err) {
	case "invalid":
		return CodeInvalid, http.StatusBadRequest
	case "not_found":
		return CodeNotFound, http.StatusNotFound
	case "unauthorized":
		return CodeUnauthorized, http.StatusUnauthorized
	case "forbidden":
		return CodeForbidden, http.StatusForbidden
	case "conflict":
		return CodeConflict, http.StatusConflict
	case "too_large":
		return CodeTooLarge, http.StatusRequestEntityTooLarge
	}
	return CodeInternal, http.StatusInternalServerError
}

// kindOf is the inverse of codeOf, for the client: the error kind a code
// stands for, or nil for internal and unknown codes.
func kindOf(code string) error {
	switch code {
	case CodeInvalid:
		return imprint.ErrInvalid
	case CodeNotFound:
		return imprint.ErrNotFound
	case CodeUnauthorized:
		return imprint.ErrUnauthorized
	case CodeForbidden:
		return imprint.ErrForbidden
	case CodeConflict:
		return imprint.ErrConflict
	case CodeTooLarge:
		return imprint.ErrTooLarge
	}
	return nil
}

// writeErrorStatus writes an error body with an explicit status.
func writeErrorStatus(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody{Error: errorDetail{Code: code, Message: msg}})
}

// fail writes err as an error response; internal errors are logged.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, status := codeOf(err)
	if status == http.StatusInternalServerError {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeErrorStatus(w, status, code, err.Error())
}

// kindError is an error of a kind with a message safe to show, for the
// kinds the root package has no constructor for.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

func tooLarge(msg string) error     { return &kindError{kind: imprint.ErrTooLarge, msg: msg} }
func unauthorized(msg string) error { return &kindError{kind: imprint.ErrUnauthorized, msg: msg} }
