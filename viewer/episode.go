package viewer

import (
	"fmt"
	"net/http"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// Capture badges of an episode card; the live script moves them along
// as the event stream reports.
const (
	badgeOpen      = "open"
	badgeCapturing = "capturing"
	badgeCaptured  = "captured"
)

type episodeCard struct {
	imprint.Episode
	Badge string
	Turns int
}

// badge is the capture state of an episode as stored: open while turns
// arrive, capturing once closed until its traces are saved.
func badge(e imprint.Episode) string {
	switch {
	case e.Status == imprint.EpisodeOpen:
		return badgeOpen
	case len(e.TraceIDs) > 0:
		return badgeCaptured
	}
	return badgeCapturing
}

func cards(eps []imprint.Episode) []episodeCard {
	out := make([]episodeCard, 0, len(eps))
	for _, e := range eps {
		n := e.TurnCount
		if n == 0 {
			n = len(e.Turns)
		}
		out = append(out, episodeCard{Episode: e, Badge: badge(e), Turns: n})
	}
	return out
}

type episodesData struct {
	Session  string
	Episodes []episodeCard
	// Unsupported says the store cannot list episodes.
	Unsupported bool
	More        string
}

func (h *Handler) episodes(w http.ResponseWriter, r *http.Request, v *view) error {
	d := episodesData{Session: strings.TrimSpace(r.URL.Query().Get("session"))}
	limit := intParam(r, "limit", pageSize, maxPageSize)
	b, ok := imprint.AsBrowser(h.d.Store)
	if ok {
		eps, err := b.ListEpisodes(r.Context(), v.Scope, imprint.EpisodeFilter{SessionID: d.Session, Limit: limit})
		if err != nil {
			return fmt.Errorf("list episodes: %w", err)
		}
		d.Episodes = cards(eps)
		if len(eps) >= limit && limit < maxPageSize {
			d.More = v.Link("/episodes", "session", d.Session, "limit", fmt.Sprint(min(2*limit, maxPageSize)))
		}
	} else {
		d.Unsupported = true
	}
	v.Title, v.Nav, v.Data = "Episodes", "episodes", d
	return h.render(w, "episodes", v)
}

// maxSteps bounds the traces shown for one episode.
const maxSteps = 500

type episodeData struct {
	Card   episodeCard
	Traces []imprint.Trace
}

func (h *Handler) episode(w http.ResponseWriter, r *http.Request, v *view) error {
	id := r.PathValue("id")
	ep, err := h.d.Store.GetEpisode(r.Context(), v.Scope, id)
	if err != nil {
		return fmt.Errorf("episode %s: %w", id, err)
	}
	trs, err := h.d.Store.ListTraces(r.Context(), v.Scope, imprint.TraceFilter{EpisodeID: id, Limit: maxSteps})
	if err != nil {
		return fmt.Errorf("episode %s traces: %w", id, err)
	}
	d := episodeData{Card: cards([]imprint.Episode{ep})[0], Traces: trs}
	v.Title, v.Nav, v.Data = "Episode "+id, "episodes", d
	return h.render(w, "episode", v)
}
