package imprint

import "strings"

// DeriveEpisodeID returns the id an episode without one is stored under: a
// hash (DerivedID) of its scope, session id, and first non-system turn's
// time (when given) and content. The same input always gets the same id.
func DeriveEpisodeID(ep Episode) string {
	sc := ep.Scope.WithDefaults()
	var first Turn
	for _, t := range ep.Turns {
		if t.Role != RoleSystem {
			first = t
			break
		}
	}
	// "" is where earlier versions hashed the scope's workspace: ids stay
	// the same, and an episode's workspace is not part of its identity.
	return DerivedID("imprint.episode.v1", sc.Tenant, sc.User, sc.Agent, "", strings.TrimSpace(ep.SessionID), first.TS.String(), first.Content)
}

// PrepareEpisode validates ep and returns it as it is stored: id derived
// when missing (DeriveEpisodeID), scope defaulted, turns without a time
// given their predecessor's (or now), status and closed_by set from
// closedBy (or ep.ClosedBy, else finalized), texts made safe to store and
// their secrets replaced by redact (nil: none, see RedactTurns). Every path
// that stores an episode (capture, the HTTP API, imports) prepares it
// first, so none stores a secret. Errors are of kind ErrInvalid and name
// the field.
func PrepareEpisode(ep Episode, closedBy ClosedBy, now Time, redact func(string) string) (Episode, error) {
	ep.SessionID = strings.TrimSpace(ep.SessionID)
	if err := ValidateID("episode session_id", ep.SessionID); err != nil {
		return ep, err
	}
	ep.Scope = ep.Scope.WithDefaults()
	if err := ep.Scope.Validate(); err != nil {
		return ep, err
	}
	if err := ValidateWorkspace("episode workspace", ep.Workspace); err != nil {
		return ep, err
	}
	if closedBy == "" {
		closedBy = ep.ClosedBy
	}
	switch closedBy {
	case "":
		closedBy = ClosedFinalized
	case ClosedFinalized, ClosedAbandoned:
	default:
		return ep, Invalidf("episode closed_by %q is not finalized or abandoned", closedBy)
	}
	if err := ValidateTurns("episode ", ep.Turns); err != nil {
		return ep, err
	}
	ep.ID = strings.TrimSpace(ep.ID)
	if ep.ID != "" {
		if err := ValidateID("episode id", ep.ID); err != nil {
			return ep, err
		}
	}
	if ep.ID == "" {
		ep.ID = DeriveEpisodeID(ep)
	}
	turns := make([]Turn, len(ep.Turns))
	prev := Time{}
	for i, t := range ep.Turns {
		if t.TS.IsZero() {
			t.TS = prev
			if t.TS.IsZero() {
				t.TS = now
			}
		}
		prev = t.TS
		turns[i] = t
	}
	ep.Turns = turns
	ep.ClosedBy = closedBy
	ep.Status = EpisodeFinalized
	if closedBy == ClosedAbandoned {
		ep.Status = EpisodeAbandoned
	}
	if len(turns) > 0 {
		if ep.StartedAt.IsZero() {
			ep.StartedAt = turns[0].TS
		}
		if ep.EndedAt.IsZero() {
			ep.EndedAt = turns[len(turns)-1].TS
		}
	}
	if ep.StartedAt.IsZero() {
		ep.StartedAt = now
	}
	if ep.EndedAt.IsZero() {
		ep.EndedAt = now
	}
	if ep.CreatedAt.IsZero() {
		ep.CreatedAt = now
	}
	ep.UpdatedAt = now
	ep.Turns = RedactTurns(storableTurns(ep.Turns), redact)
	return ep, nil
}
