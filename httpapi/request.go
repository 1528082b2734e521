package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// readBody reads the whole request body within the size limit; an empty
// body reads as nil.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return nil, tooLarge(fmt.Sprintf("request body is larger than %d bytes", s.cfg.MaxBodyBytes))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge(fmt.Sprintf("request body is larger than %d bytes", mbe.Limit))
	}
	if err != nil {
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			return nil, imprint.Invalidf("read request body: the body did not arrive within the request timeout")
		}
		return nil, imprint.Invalidf("read request body: %v", err)
	}
	// Checked before decoding: encoding/json would turn invalid UTF-8 and
	// lone surrogate escapes into U+FFFD without a word.
	if err := imprint.ValidateJSON("request body", body); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(body), nil
}

// readObject reads the body as a JSON object and returns its fields. With
// optional set, an empty body is an empty object.
func (s *Server) readObject(w http.ResponseWriter, r *http.Request, optional bool) ([]byte, map[string]json.RawMessage, error) {
	body, err := s.readBody(w, r)
	if err != nil {
		return nil, nil, err
	}
	if len(body) == 0 {
		if optional {
			return []byte("{}"), map[string]json.RawMessage{}, nil
		}
		return nil, nil, imprint.Invalidf("request body is required (a JSON object)")
	}
	if !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		return nil, nil, imprint.Invalidf("request body is not valid JSON: %v", err)
	}
	if body[0] != '{' {
		return nil, nil, imprint.Invalidf("request body must be a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, nil, imprint.Invalidf("request body: %v", err)
	}
	return body, fields, nil
}

// present reports whether the object has the key with a non-null value.
func present(fields map[string]json.RawMessage, key string) bool {
	v, ok := fields[key]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

// stringField reads an optional string field.
func stringField(fields map[string]json.RawMessage, key string) (string, error) {
	if !present(fields, key) {
		return "", nil
	}
	var v string
	if err := json.Unmarshal(fields[key], &v); err != nil {
		return "", imprint.Invalidf("%s must be a string", key)
	}
	return v, nil
}

// scopeIn is a scope object as given; nil parts were not given.
type scopeIn struct {
	Tenant *string `json:"tenant"`
	User   *string `json:"user"`
	Agent  *string `json:"agent"`
}

// scopeOf returns the request's scope: the body's scope object when it has
// one, else the query parameters tenant, user and agent. Parts
// not given are the API key's, or "default"; a part given empty or invalid
// is ErrInvalid, one outside the request's API key ErrForbidden.
func scopeOf(r *http.Request, fields map[string]json.RawMessage) (imprint.Scope, error) {
	q := r.URL.Query()
	var in scopeIn
	prefix := "scope."
	if present(fields, "scope") {
		if err := json.Unmarshal(fields["scope"], &in); err != nil {
			return imprint.Scope{}, imprint.Invalidf("scope must be an object {tenant, user, agent}")
		}
	} else {
		prefix = ""
		for key, dst := range map[string]**string{"tenant": &in.Tenant, "user": &in.User, "agent": &in.Agent} {
			if q.Has(key) {
				v := q.Get(key)
				*dst = &v
			}
		}
	}
	var sc imprint.Scope
	for _, p := range []struct {
		name string
		in   *string
		out  *string
	}{{"tenant", in.Tenant, &sc.Tenant}, {"user", in.User, &sc.User}, {"agent", in.Agent, &sc.Agent}} {
		if p.in == nil {
			*p.out = imprint.DefaultScopePart
			continue
		}
		if strings.TrimSpace(*p.in) == "" {
			return sc, imprint.Invalidf("%s%s must not be empty", prefix, p.name)
		}
		if strings.ContainsFunc(*p.in, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return sc, imprint.Invalidf("%s%s must not contain control characters", prefix, p.name)
		}
		*p.out = *p.in
	}
	if err := sc.Validate(); err != nil {
		return sc, err
	}
	return principalOf(r).restrict(sc, [3]bool{in.Tenant != nil, in.User != nil, in.Agent != nil})
}

// queryScope is scopeOf for requests without a body.
func queryScope(r *http.Request) (imprint.Scope, error) {
	return scopeOf(r, nil)
}

// intParam reads an optional non-negative integer query parameter.
func intParam(q url.Values, key string, def int) (int, error) {
	v := strings.TrimSpace(q.Get(key))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, imprint.Invalidf("%s must be a non-negative integer, got %q", key, v)
	}
	return n, nil
}

// boolParam reads an optional boolean query parameter; a bare key is true.
func boolParam(q url.Values, key string) (bool, error) {
	if !q.Has(key) {
		return false, nil
	}
	v := strings.TrimSpace(q.Get(key))
	if v == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, imprint.Invalidf("%s must be true or false, got %q", key, v)
	}
	return b, nil
}

// scopedGet reads what a GET of one resource starts with: the scope from
// the query, then the {id} path value (what names the resource in errors).
func scopedGet(r *http.Request, what string) (imprint.Scope, string, error) {
	scope, err := queryScope(r)
	if err != nil {
		return imprint.Scope{}, "", err
	}
	id, err := pathID(r, what)
	if err != nil {
		return imprint.Scope{}, "", err
	}
	return scope, id, nil
}

// sessionCall reads what a POST /v1/sessions/{id}/… call starts with: the
// session id from the path, then the JSON object body (an empty body
// allowed when optional), then the scope from body and query.
func (s *Server) sessionCall(w http.ResponseWriter, r *http.Request, optional bool) (string, map[string]json.RawMessage, imprint.Scope, error) {
	id, err := pathID(r, "session")
	if err != nil {
		return "", nil, imprint.Scope{}, err
	}
	_, fields, err := s.readObject(w, r, optional)
	if err != nil {
		return "", nil, imprint.Scope{}, err
	}
	scope, err := scopeOf(r, fields)
	if err != nil {
		return "", nil, imprint.Scope{}, err
	}
	return id, fields, scope, nil
}

// pathID reads the {id} path value; ErrInvalid when it is not a valid id
// (imprint.ValidateID).
func pathID(r *http.Request, what string) (string, error) {
	id := strings.TrimSpace(r.PathValue("id"))
	if err := imprint.ValidateID(what+" id", id); err != nil {
		return "", err
	}
	return id, nil
}

// idParam reads an optional id query parameter; ErrInvalid when it is
// given and not a valid id (imprint.ValidateID).
func idParam(q url.Values, key string) (string, error) {
	id := strings.TrimSpace(q.Get(key))
	if id == "" {
		return "", nil
	}
	if err := imprint.ValidateID(key, id); err != nil {
		return "", err
	}
	return id, nil
}
