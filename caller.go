package imprint

import "context"

// ViewerCookie is the name of the cookie in which the web viewer keeps the
// key its user gave: the HTTP API accepts it, instead of an Authorization
// header, on the viewer's own same-origin requests only.
const ViewerCookie = "imprint_key"

// Caller is who a request handed to a front end mounted by the HTTP API
// comes from: the administrator (Key nil) or the holder of one API key.
type Caller struct {
	Key *APIKey
}

type callerCtxKey struct{}

// WithCaller returns ctx carrying c, for the handlers the HTTP API calls
// after authenticating a request.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerCtxKey{}, c)
}

// CallerOf returns the caller ctx carries, and false when the request was
// not authenticated.
func CallerOf(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerCtxKey{}).(Caller)
	return c, ok
}

// ReadOnly reports whether the caller may only read.
func (c Caller) ReadOnly() bool { return c.Key != nil && c.Key.ReadOnly }

// Restrict returns the scope the caller sees when they ask for want: parts
// want leaves empty are the key's, or "default"; a part outside the key is
// ErrForbidden. The administrator gets want with defaults.
func (c Caller) Restrict(want Scope) (Scope, error) {
	if c.Key != nil {
		ks := c.Key.Scope
		for _, p := range []struct {
			name string
			key  string
			got  *string
		}{{"tenant", ks.Tenant, &want.Tenant}, {"user", ks.User, &want.User}, {"agent", ks.Agent, &want.Agent}} {
			switch {
			case p.key == "":
			case *p.got == "":
				*p.got = p.key
			case *p.got != p.key:
				return want, Forbiddenf("api key %s does not cover %s %q", c.Key.ID, p.name, *p.got)
			}
		}
	}
	want = want.WithDefaults()
	if c.Key != nil && !c.Key.Scope.Covers(want) {
		return want, Forbiddenf("api key %s does not cover scope %s", c.Key.ID, want)
	}
	return want, nil
}
