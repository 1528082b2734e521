package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// MaxLineBytes bounds one JSONL line; longer lines are reported and skipped
// so a corrupt file cannot exhaust memory.
const MaxLineBytes = 64 << 20

// EachLine calls fn with every line of r (1-based line numbers), without its
// line ending and without a leading byte-order mark. A line longer than
// MaxLineBytes is skipped and reported to fn with tooLong set.
func EachLine(r io.Reader, fn func(n int, line []byte, tooLong bool)) error {
	br := bufio.NewReaderSize(r, 16<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if errors.Is(err, errLineTooLong) {
			fn(n, nil, true)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if err == nil || len(line) > 0 {
			fn(n, bytes.TrimSuffix(line, []byte("\r")), false)
		}
		if err != nil {
			return nil
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line; a line over MaxLineBytes is consumed and returned
// as nil with errLineTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLineBytes {
			buf = nil
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return buf, err
		}
		return bytes.TrimSuffix(buf, []byte("\n")), nil
	}
}
