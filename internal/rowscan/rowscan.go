// Package rowscan lets a store's scan function read a row that carries
// more columns than the record: database/sql's rows and pgx's rows alike.
package rowscan

// Row is a row to scan: *sql.Row, *sql.Rows, pgx.Row and pgx.Rows.
type Row interface {
	Scan(dst ...any) error
}

// With returns a Row that scans the columns before the record's into
// head and those after it into tail, and the record's own into the
// destinations its caller passes.
func With(r Row, head, tail []any) Row { return with{r, head, tail} }

type with struct {
	r          Row
	head, tail []any
}

func (w with) Scan(dst ...any) error {
	all := make([]any, 0, len(w.head)+len(dst)+len(w.tail))
	all = append(append(append(all, w.head...), dst...), w.tail...)
	return w.r.Scan(all...)
}
