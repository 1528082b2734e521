package wire

import (
	"errors"
	"io/fs"
	"os"

	imprint "github.com/imprint-dev/imprint"
)

// FileError is err, met reading or opening path, as an error of kind
// ErrInvalid that names path once: "notes.json: no such file or
// directory", not "notes.json: open notes.json: no such file or
// directory" (the *fs.PathError's own op and path are dropped).
func FileError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return imprint.Invalidf("%s: %v", path, err)
}

// OpenFile opens the input file path for reading. A missing or unreadable
// file, or a directory, is an error of kind ErrInvalid naming path once;
// for a directory it ends with dirHint when given (what to run instead).
func OpenFile(path, dirHint string) (*os.File, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, FileError(path, err)
	}
	if info.IsDir() {
		if dirHint != "" {
			return nil, imprint.Invalidf("%s: is a directory, not a file; %s", path, dirHint)
		}
		return nil, imprint.Invalidf("%s: is a directory, not a file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, FileError(path, err)
	}
	return f, nil
}
