package ingest

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/imprint-dev/imprint/config"
)

// Doctor is what imprint doctor found: its checks and the configuration
// they ran with.
type Doctor struct {
	Checks []Check
	Config *config.Config
}

// Failed names the checks that failed, in order.
func (d Doctor) Failed() []string {
	var out []string
	for _, c := range d.Checks {
		if c.Status == CheckFail {
			out = append(out, c.Check)
		}
	}
	return out
}

// WriteText writes the checks as aligned columns, then the configuration
// in effect with where each value came from (secrets masked).
func (d Doctor) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range d.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Check, c.Status, c.Detail)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	fmt.Fprintln(w, "\nconfiguration in effect (secrets masked):")
	for _, e := range d.Config.Entries() {
		v := e.Value
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t(%s)\n", e.Key, v, e.Source)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
