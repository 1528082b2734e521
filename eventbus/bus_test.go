package eventbus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type ev struct{ kind, body string }

func TestBusOrderUnsubscribeAndPanic(t *testing.T) {
	t.Parallel()
	var b Bus[ev]
	var got []string
	record := func(who string) func(ev) { return func(e ev) { got = append(got, who+":"+e.body) } }
	b.Subscribe("*", record("wild"))
	b.Subscribe("a", func(ev) { panic("boom") })
	unA := b.Subscribe("a", record("a"))
	b.Subscribe("b", record("b"))

	var panics []any
	onPanic := func(r any) { panics = append(panics, r) }
	b.Publish("a", "*", ev{"a", "1"}, onPanic)
	unA()
	unA()
	b.Publish("a", "*", ev{"a", "2"}, onPanic)
	b.Publish("b", "*", ev{"b", "3"}, nil)

	want := []string{"a:1", "wild:1", "wild:2", "b:3", "wild:3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"boom", "boom"}, panics); diff != "" {
		t.Errorf("panics (-want +got):\n%s", diff)
	}
	counts := []int{b.SubscriberCount("a", "*"), b.SubscriberCount("b", "*"), b.SubscriberCount("", "*"), b.SubscriberCount("c", "*")}
	if diff := cmp.Diff([]int{2, 2, 3, 1}, counts); diff != "" {
		t.Errorf("subscriber counts a, b, all, c (-want +got):\n%s", diff)
	}
}
