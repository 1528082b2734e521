package wire

import (
	"bytes"
	"fmt"
	"strconv"

	imprint "github.com/imprint-dev/imprint"
)

// CheckDocument returns an error of kind ErrInvalid naming file, line and
// byte when data is not valid UTF-8 or escapes a lone surrogate.
func CheckDocument(data []byte, file string) error {
	off, problem := imprint.BadJSONText(data)
	if off < 0 {
		return nil
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	return Invalid(file, "line "+strconv.Itoa(line), fmt.Sprintf("text %s (byte %d)", problem, off))
}

// LineProblem returns why a JSONL line cannot be read as sent ("" when it
// can): invalid UTF-8 or a lone surrogate escape, with the byte offset
// within the line.
func LineProblem(line []byte) string {
	off, problem := imprint.BadJSONText(line)
	if off < 0 {
		return ""
	}
	return fmt.Sprintf("text %s (byte %d of the line)", problem, off)
}

// CheckID returns an error of kind ErrInvalid naming file and the field
// path when the given id is unusable (imprint.ValidateID); "" is not
// checked.
func CheckID(file, path, id string) error {
	if id == "" {
		return nil
	}
	if err := imprint.ValidateID(path, id); err != nil {
		return Invalid(file, "", err.Error())
	}
	return nil
}

// CheckScope checks the scope parts an input gives; a part left empty
// takes its default later.
func CheckScope(file, label string, sc imprint.Scope) error {
	for _, p := range []struct{ name, v string }{{"tenant", sc.Tenant}, {"user", sc.User}, {"agent", sc.Agent}} {
		if err := CheckID(file, Field(label, "scope."+p.name), p.v); err != nil {
			return err
		}
	}
	return nil
}
