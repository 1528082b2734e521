package importer

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"unicode/utf8"
)

// readAll reads r to its end like io.ReadAll, in one buffer of the right
// size when r is a file that knows its size.
func readAll(r io.Reader) ([]byte, error) {
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > 0 && st.Size() < 1<<31 {
			var buf bytes.Buffer
			buf.Grow(int(st.Size()) + bytes.MinRead)
			_, err := buf.ReadFrom(r)
			return buf.Bytes(), err
		}
	}
	return io.ReadAll(r)
}

// decodeArray decodes data, a JSON array of T, in one pass, and reports
// whether it could: false when data is not an array or any element does not
// decode into T, for the caller's element-by-element path to report. On
// success the elements are what decoding each one alone into a fresh T
// gives: encoding/json decodes an array into a new slice element by
// element, each into a zero T.
func decodeArray[T any](data []byte) ([]T, bool) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil, false
	}
	var out []T
	if err := json.Unmarshal(trimmed, &out); err != nil {
		return nil, false
	}
	return out, true
}

// plainJSONString returns the text of raw, a JSON string without escapes,
// as json.Unmarshal into a string would give it, and false for any other
// JSON (a string with escapes, control characters or invalid UTF-8, or
// another value), which the caller decodes with encoding/json.
func plainJSONString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}
