package viewer

import (
	"context"
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
	badgeFailed    = "failed"
)

// maxCaptureJobs bounds the capture jobs read to tell a closed episode
// still being captured from one whose capture gave up or found no step.
const maxCaptureJobs = 1000

type episodeCard struct {
	imprint.Episode
	Badge string
	Turns int
}

// captureJobs are the scope's capture jobs by state: the episodes whose
// capture is pending (to run, running, to retry) and those whose capture
// gave up.
type captureJobs struct{ pending, failed map[string]bool }

func (h *Handler) captureJobs(ctx context.Context, scope imprint.Scope) (captureJobs, error) {
	cj := captureJobs{pending: map[string]bool{}, failed: map[string]bool{}}
	for _, st := range []imprint.JobState{imprint.JobAvailable, imprint.JobRunning, imprint.JobRetryable, imprint.JobFailed} {
		jobs, err := h.d.Store.ListJobs(ctx, &scope, st, maxCaptureJobs)
		if err != nil {
			return cj, fmt.Errorf("capture jobs: %w", err)
		}
		for _, j := range jobs {
			if j.Kind != imprint.JobCapture || j.EpisodeID == "" {
				continue
			}
			if st == imprint.JobFailed {
				cj.failed[j.EpisodeID] = true
			} else {
				cj.pending[j.EpisodeID] = true
			}
		}
	}
	return cj, nil
}

// badge is the capture state of an episode: open while turns arrive,
// capturing once closed while its capture job is pending, captured once
// its traces are saved (or its capture found no step), failed when its
// capture gave up.
func (cj captureJobs) badge(e imprint.Episode) string {
	switch {
	case e.Status == imprint.EpisodeOpen:
		return badgeOpen
	case len(e.TraceIDs) > 0:
		return badgeCaptured
	case cj.pending[e.ID]:
		return badgeCapturing
	case cj.failed[e.ID]:
		return badgeFailed
	}
	return badgeCaptured
}

// cards are the episodes as cards with their capture badges.
func (h *Handler) cards(ctx context.Context, scope imprint.Scope, eps []imprint.Episode) ([]episodeCard, error) {
	out := make([]episodeCard, 0, len(eps))
	if len(eps) == 0 {
		return out, nil
	}
	cj, err := h.captureJobs(ctx, scope)
	if err != nil {
		return nil, err
	}
	for _, e := range eps {
		n := e.TurnCount
		if n == 0 {
			n = len(e.Turns)
		}
		out = append(out, episodeCard{Episode: e, Badge: cj.badge(e), Turns: n})
	}
	return out, nil
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
		if d.Episodes, err = h.cards(r.Context(), v.Scope, eps); err != nil {
			return err
		}
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
	cs, err := h.cards(r.Context(), v.Scope, []imprint.Episode{ep})
	if err != nil {
		return err
	}
	d := episodeData{Card: cs[0], Traces: trs}
	v.Title, v.Nav, v.Data = "Episode "+id, "episodes", d
	return h.render(w, "episode", v)
}
