package viewer

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	imprint "github.com/imprint-dev/imprint"
)

type sessionsData struct {
	Sessions []imprint.Session
	Total    int
	More     string
}

func (h *Handler) sessions(w http.ResponseWriter, r *http.Request, v *view) error {
	all, err := h.d.Store.ListSessions(r.Context(), v.Scope)
	if err != nil {
		return fmt.Errorf("list sessions: %w", err)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].UpdatedAt.After(all[j].UpdatedAt.Time) })
	limit := intParam(r, "limit", pageSize, maxPageSize)
	d := sessionsData{Sessions: all[:min(limit, len(all))], Total: len(all)}
	if len(all) > limit && limit < maxPageSize {
		d.More = v.Link("/sessions", "limit", fmt.Sprint(min(2*limit, maxPageSize)))
	}
	v.Title, v.Nav, v.Data = "Sessions", "sessions", d
	return h.render(w, "sessions", v)
}

// Bounds of the session page: the messages of one page of the timeline,
// and the memories read to say which messages went into which.
const (
	timelinePage    = 100
	sessionMemories = 200
)

type timelineEntry struct {
	imprint.Message
	Memories []imprint.Memory
	Pending  bool
}

type sessionData struct {
	Session  imprint.Session
	Entries  []timelineEntry
	Episodes []episodeCard
	// Earlier links the page of older messages.
	Earlier string
}

func (h *Handler) session(w http.ResponseWriter, r *http.Request, v *view) error {
	ctx := r.Context()
	id := r.PathValue("id")
	s, err := h.d.Store.GetSession(ctx, v.Scope, id)
	if err != nil {
		return fmt.Errorf("session %s: %w", id, err)
	}
	before := int64(math.MaxInt64)
	if b, err := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64); err == nil && b > 0 {
		before = b
	}
	msgs, err := h.d.Store.MessagesBefore(ctx, v.Scope, id, before, timelinePage)
	if err != nil {
		return fmt.Errorf("session %s messages: %w", id, err)
	}
	mems, err := h.d.Store.ListMemories(ctx, v.Scope, imprint.MemoryFilter{SessionID: id, Limit: sessionMemories})
	if err != nil {
		return fmt.Errorf("session %s memories: %w", id, err)
	}
	from := map[string][]imprint.Memory{}
	for _, m := range mems {
		for _, sid := range m.SourceMessageIDs {
			from[sid] = append(from[sid], m)
		}
	}
	d := sessionData{Session: s}
	for _, m := range msgs {
		d.Entries = append(d.Entries, timelineEntry{Message: m, Memories: from[m.ID], Pending: m.Seq > s.Cursor})
	}
	if len(msgs) == timelinePage {
		d.Earlier = v.Link("/sessions/"+url.PathEscape(id), "before", strconv.FormatInt(msgs[0].Seq, 10))
	}
	if b, ok := imprint.AsBrowser(h.d.Store); ok {
		eps, err := b.ListEpisodes(ctx, v.Scope, imprint.EpisodeFilter{SessionID: id, Limit: pageSize})
		if err != nil {
			return fmt.Errorf("session %s episodes: %w", id, err)
		}
		if d.Episodes, err = h.cards(ctx, v.Scope, eps); err != nil {
			return err
		}
	}
	v.Title, v.Nav, v.Data = "Session "+id, "sessions", d
	return h.render(w, "session", v)
}
