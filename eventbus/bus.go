package eventbus

import "sync"

// Bus delivers events of type E to subscribers, synchronously, in
// subscription order: subscribers of the event's kind first, then those of
// the wildcard kind given to Publish. The zero Bus is ready to use and safe
// for concurrent use; it must not be copied after first use.
type Bus[E any] struct {
	mu     sync.RWMutex
	nextID int
	subs   []sub[E]
}

type sub[E any] struct {
	id   int
	kind string
	fn   func(E)
}

// Subscribe registers fn for events of kind and returns a function that
// removes it; calling that function more than once is harmless.
func (b *Bus[E]) Subscribe(kind string, fn func(E)) (unsubscribe func()) {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	b.subs = append(b.subs, sub[E]{id: id, kind: kind, fn: fn})
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			for i, s := range b.subs {
				if s.id == id {
					b.subs = append(b.subs[:i:i], b.subs[i+1:]...)
					return
				}
			}
		})
	}
}

// Publish delivers e, whose kind is kind, to the subscribers of kind and
// then to those of wildcard, before it returns. A subscriber that panics is
// skipped; onPanic, if not nil, is told what it panicked with.
func (b *Bus[E]) Publish(kind, wildcard string, e E, onPanic func(recovered any)) {
	b.mu.RLock()
	var targeted, wild []func(E)
	for _, s := range b.subs {
		switch s.kind {
		case kind:
			targeted = append(targeted, s.fn)
		case wildcard:
			wild = append(wild, s.fn)
		}
	}
	b.mu.RUnlock()
	for _, fn := range append(targeted, wild...) {
		deliver(fn, e, onPanic)
	}
}

// SubscriberCount returns how many subscribers receive events of kind
// (those of the kind plus those of wildcard); kind "" counts all.
func (b *Bus[E]) SubscriberCount(kind, wildcard string) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := 0
	for _, s := range b.subs {
		if kind == "" || s.kind == kind || s.kind == wildcard {
			n++
		}
	}
	return n
}

func deliver[E any](fn func(E), e E, onPanic func(any)) {
	defer func() {
		if r := recover(); r != nil && onPanic != nil {
			onPanic(r)
		}
	}()
	fn(e)
}
