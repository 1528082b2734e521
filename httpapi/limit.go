package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
)

// DefaultMaxTurnsPerRequest is server.max_turns_per_request: the messages
// or turns one request may carry (POST /v1/messages, /v1/episodes and
// /v1/sessions/{id}/turns), and the chunk size of the Client's posts.
const DefaultMaxTurnsPerRequest = 1000

// checkCount answers 413 too_large, before anything is written, when the
// array field of a request carries more items than the server takes. A
// field that is not an array is left to the reader, which says why.
func (s *Server) checkCount(fields map[string]json.RawMessage, field string) error {
	var items []json.RawMessage
	if json.Unmarshal(fields[field], &items) != nil {
		return nil
	}
	if max := s.cfg.MaxTurnsPerRequest; len(items) > max {
		return tooLarge(fmt.Sprintf("%s: %d items; a request may carry at most %d (server.max_turns_per_request): split the post", field, len(items), max))
	}
	return nil
}

// chunked sends items n at a time through post, in order, with n the
// client's MaxTurnsPerRequest (default DefaultMaxTurnsPerRequest). A
// chunk the server answers 413 too_large (its limit, or its body size, is
// lower) wrote nothing: it is sent again in halves. post is never called
// with an empty chunk unless items is empty.
func chunked[T any](ctx context.Context, c *Client, items []T, post func(context.Context, []T) error) error {
	n := c.MaxTurnsPerRequest
	if n <= 0 {
		n = DefaultMaxTurnsPerRequest
	}
	if len(items) == 0 {
		return post(ctx, items)
	}
	for start := 0; start < len(items); {
		end := min(start+n, len(items))
		err := post(ctx, items[start:end])
		if errors.Is(err, imprint.ErrTooLarge) && end-start > 1 {
			n = (end - start) / 2
			continue
		}
		if err != nil {
			return err
		}
		start = end
	}
	return nil
}
