package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	imprint "github.com/imprint-dev/imprint"
)

// schemaTypes are the schemas of the domain types whose JSON is not what
// their Go shape says.
var schemaTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[imprint.Time]():    {Types: []string{"null", "string"}, Description: "RFC 3339 UTC time, null when unknown"},
	reflect.TypeFor[json.RawMessage](): {},
}

// schemaFor infers T's JSON schema, then sets the enums given by property
// name (the values an argument may take).
func schemaFor[T any](enums map[string][]any) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: schemaTypes})
	if err != nil {
		return nil, fmt.Errorf("schema of %T: %w", *new(T), err)
	}
	for name, vals := range enums {
		if p := s.Properties[name]; p != nil {
			p.Enum = vals
		}
	}
	return s, nil
}
