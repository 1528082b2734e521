package curate

import (
	"context"

	"github.com/imprint-dev/imprint"
)

// ForgetManyConfirmed is the bulk forget of imprint forget through m.
// Confirmed, it retires the live memories f selects and returns how many.
// Unconfirmed, it only counts them (a dry run) and returns that count with
// an error of kind ErrInvalid saying how many it would forget and how to
// confirm (add --yes): a mistyped filter forgets nothing. ErrInvalid also
// for a filter that selects by neither session nor date.
func ForgetManyConfirmed(ctx context.Context, m imprint.Memories, scope imprint.Scope, f imprint.ForgetFilter, confirmed bool) (int, error) {
	f.DryRun = !confirmed
	n, err := m.ForgetMany(ctx, scope, f)
	if err != nil {
		return 0, err
	}
	if !confirmed {
		what := "memories"
		if n == 1 {
			what = "memory"
		}
		return n, imprint.Invalidf("would forget %d %s; add --yes", n, what)
	}
	return n, nil
}
