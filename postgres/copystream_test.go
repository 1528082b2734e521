package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// streamRows are rows of one text field from 10 bytes to 200 kB, larger
// than the 64 kB CopyFrom reads at a time.
func streamRows() []string {
	var rows []string
	for i := range 40 {
		rows = append(rows, strings.Repeat(string(rune('a'+i%26)), 10+(i*i*i)%200_000))
	}
	return rows
}

func streamRow(rows []string) func(b []byte, i int) ([]byte, error) {
	return func(b []byte, i int) ([]byte, error) {
		b = binary.BigEndian.AppendUint16(b, 1)
		return copyText(b, rows[i]), nil
	}
}

// TestCopyStreamBytes reads streams in pieces of several sizes: each gives
// the header, every row in order and the trailer, once, in full reads.
func TestCopyStreamBytes(t *testing.T) {
	rows := streamRows()
	want := append([]byte(nil), copyHeader...)
	for i := range rows {
		want, _ = streamRow(rows)(want, i)
	}
	want = binary.BigEndian.AppendUint16(want, math.MaxUint16)
	for _, size := range []int{1, 7, 4096, 65531, 1 << 20} {
		s := &copyStream{n: len(rows), row: streamRow(rows)}
		var got bytes.Buffer
		p := make([]byte, size)
		short := 0 // reads that did not fill p
		for {
			n, err := s.Read(p)
			got.Write(p[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("read %d: %v", size, err)
			}
			if n < size {
				short++
			}
		}
		// Every read but the last fills p: a row's tail is sent with the
		// next rows, not as a message of its own.
		if short > 1 {
			t.Errorf("reads of %d: %d did not fill the buffer", size, short)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("reads of %d: %d bytes, want %d (equal prefix %d)", size, got.Len(), len(want), commonPrefix(got.Bytes(), want))
		}
	}
	// No rows: the header and the trailer.
	var got bytes.Buffer
	if _, err := io.Copy(&got, &copyStream{row: streamRow(nil)}); err != nil {
		t.Fatal(err)
	}
	if want := append(append([]byte(nil), copyHeader...), 0xff, 0xff); !bytes.Equal(got.Bytes(), want) {
		t.Errorf("no rows: %q, want %q", got.Bytes(), want)
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestCopyStreamIntoPostgres sends a stream to the server: every row is
// stored; a row that fails to encode fails the COPY with its error and
// stores none, the transaction can roll back, and the stream is not read
// once copyFrom has returned.
func TestCopyStreamIntoPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	if db.noCopy {
		t.Skip("this server takes no COPY FROM STDIN")
	}
	rows := streamRows()
	if _, err := db.pool.Exec(ctx, `CREATE TABLE stream_rows (t text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		return copyFrom(ctx, tx, &copyStream{n: len(rows), row: streamRow(rows)}, `COPY stream_rows (t) FROM STDIN (FORMAT binary)`)
	})
	if err != nil {
		t.Fatal(err)
	}
	var n, total int
	if err := db.pool.QueryRow(ctx, `SELECT count(*), sum(length(t)) FROM stream_rows`).Scan(&n, &total); err != nil {
		t.Fatal(err)
	}
	wantTotal := 0
	for _, r := range rows {
		wantTotal += len(r)
	}
	if n != len(rows) || total != wantTotal {
		t.Errorf("stored %d rows of %d bytes, want %d of %d", n, total, len(rows), wantTotal)
	}

	bad := errors.New("row 30 does not encode")
	ok := streamRow(rows)
	s := &copyStream{n: len(rows), row: func(b []byte, i int) ([]byte, error) {
		if i == 30 {
			return nil, bad
		}
		return ok(b, i)
	}}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = copyFrom(ctx, tx, s, `COPY stream_rows (t) FROM STDIN (FORMAT binary)`)
	if err == nil || !strings.Contains(err.Error(), bad.Error()) {
		t.Errorf("copy with a bad row: %v, want the row's error", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM stream_rows`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(rows) {
		t.Errorf("%d rows after the failed copy, want %d", n, len(rows))
	}
	if _, err := s.Read(make([]byte, 10)); !errors.Is(err, errCopyClosed) {
		t.Errorf("read after copyFrom: %v, want errCopyClosed", err)
	}
}

// TestCopyStreamConnectionDies kills the COPY's backend while the stream is
// being read: copyFrom returns an error, and the row function is never
// called once it has returned (pgconn may return without waiting for its
// reader goroutine on this path).
func TestCopyStreamConnectionDies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	if db.noCopy {
		t.Skip("this server takes no COPY FROM STDIN")
	}
	if _, err := db.pool.Exec(ctx, `CREATE TABLE stream_die (t text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	one := strings.Repeat("x", 1000)
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var pid int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	var returned, lateCalls atomic.Bool
	killed := false
	s := &copyStream{n: 100_000, row: func(b []byte, i int) ([]byte, error) {
		if returned.Load() {
			lateCalls.Store(true)
		}
		if i == 300 && !killed {
			killed = true
			if _, err := db.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
				t.Error(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		b = binary.BigEndian.AppendUint16(b, 1)
		return copyText(b, one), nil
	}}
	err = copyFrom(ctx, tx, s, `COPY stream_die (t) FROM STDIN (FORMAT binary)`)
	returned.Store(true)
	if err == nil {
		t.Fatal("copy on a terminated backend succeeded")
	}
	time.Sleep(200 * time.Millisecond)
	if lateCalls.Load() {
		t.Error("the row function was called after copyFrom returned")
	}
}
