package storetest

import (
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func diff(want, got any, opts ...cmp.Option) string {
	return cmp.Diff(want, got, append(opts, cmpopts.EquateEmpty())...)
}
