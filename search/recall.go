package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/promptguard"
)

// maxRecallBudget bounds what a caller can ask for; a context block larger
// than this defeats the purpose of recall.
const maxRecallBudget = 32000

// Depths of the recall searches and the length limits of a bullet's parts,
// in runes. Bullets are cut so one long record cannot eat the budget.
const (
	recallMemoryHits   = 8
	recallTraceHits    = 4
	recallMessageHits  = 12
	maxMessageRunes    = 300
	recallInstructions = 200
	recallPersona      = 50
	maxMemoryRunes     = 600
	maxTaskRunes       = 200
	maxActionRunes     = 200
	maxReflectionRunes = 400
	// maxSourceIDs is the number of source message ids an instruction's
	// bullet names; the hit lists them all.
	maxSourceIDs    = 3
	maxSourceIDRune = 80
)

// RecallOpenTag and RecallCloseTag enclose every non-empty recall context
// block, so that a recorder given a prompt into which a host injected the
// block (record.Sanitize strips <imprint-recall>…</imprint-recall>) keeps
// only the user's own text instead of recording recalled memories as if
// the user had said them again.
const (
	RecallOpenTag  = "<imprint-recall>"
	RecallCloseTag = "</imprint-recall>"
)

// Headings of the recall context block.
const (
	recallHeader       = "Memory from earlier work with this user (imprint):"
	headInstructions   = "Standing instructions:"
	headPersona        = "About the user:"
	headMemories       = "Relevant memories:"
	headExperience     = "Recent experience:"
	headConversation   = "From earlier conversations:"
	recallBulletPrefix = "- "
)

// DefaultRecallMinScore is the cosine below which a vector match is not
// recalled: unlike a search result list, a context block should not carry
// records that merely share a stray character n-gram with the query.
const DefaultRecallMinScore = 0.15

// Recaller builds recall context blocks: hybrid search plus the store
// reads it needs to show types, dates and reflections. Memories and Traces
// may be nil: then no standing instructions are listed, and hits are shown
// with the text the search returned.
type Recaller struct {
	Searcher
	Memories imprint.MemoryStore
	Traces   imprint.EpisodeStore
	// Messages, when set, shows each recalled message with its date and
	// speaker; nil shows the text the search returned.
	Messages MessageGetter
	// MinScore drops vector matches below this cosine; zero means
	// DefaultRecallMinScore, or LexicalMinScore for a lexical embedder,
	// negative keeps every match.
	MinScore float64
}

// MessageGetter reads one message (imprint.MessageStore has it).
type MessageGetter interface {
	GetMessage(ctx context.Context, scope imprint.Scope, sessionID, id string) (imprint.Message, error)
}

// recallItem is one bullet of the block and the record it shows.
type recallItem struct {
	text string
	// source, when set, follows text on the bullet: where the record came
	// from. Two bullets of the same text are one whatever their sources.
	source string
	hit    imprint.Hit
}

// Recall returns the context block for q, enclosed in RecallOpenTag and
// RecallCloseTag with a header line inside: the scope's standing
// instructions (live instruction memories, priority −1 first, then by
// priority, highest first, each naming the session and messages it came
// from; one that asks the assistant to reveal secrets, run downloaded
// code, deceive or hide from the user, as promptguard.InstructionHarm
// tells, is never recalled), then the live memories most relevant to q.Text
// (scope-wide), then the most relevant traces (scope-wide, q.SessionID's
// first among equals), each a one-line bullet, never the same line twice.
// Instructions are in every block; a memory or trace is one only when the
// query's keywords match it or its vector is above the cosine floor, so a
// query that matches nothing recalls the instructions alone. The block is cut to the budget after the last
// whole bullet that fits: it is always a prefix of the full block, so a
// less important record never displaces a more important one. It returns ErrInvalid for an
// invalid scope; store and search errors are wrapped.
func (r Recaller) Recall(ctx context.Context, q imprint.RecallQuery) (imprint.RecallResult, error) {
	res := imprint.RecallResult{Hits: []imprint.Hit{}}
	if err := q.Scope.Validate(); err != nil {
		return res, err
	}
	budget := q.BudgetTokens
	if budget <= 0 {
		budget = imprint.DefaultRecallBudget
	}
	budget = min(budget, maxRecallBudget)

	instructions, seen, err := r.instructions(ctx, q.Scope, q.Workspace)
	if err != nil {
		return res, err
	}
	var persona, memories, traces, messages []recallItem
	if q.Persona {
		if persona, err = r.persona(ctx, q.Scope, q.Workspace, seen); err != nil {
			return res, err
		}
	}
	if strings.TrimSpace(q.Text) != "" {
		vec := r.queryVector(ctx, q.Text)
		if memories, err = r.memories(ctx, q, vec, seen); err != nil {
			return res, err
		}
		if traces, err = r.traces(ctx, q, vec); err != nil {
			return res, err
		}
		if messages, err = r.messages(ctx, q, vec); err != nil {
			return res, err
		}
	}
	res.Context, res.Hits = layout(budget, []string{headInstructions, headPersona, headMemories, headExperience, headConversation},
		[][]recallItem{instructions, persona, memories, traces, messages})
	return res, nil
}

// inWorkspace is the memory filter of a recall in workspace ws: its
// memories and the workspace-less ones, or every workspace for ws "".
func inWorkspace(f imprint.MemoryFilter, ws string) imprint.MemoryFilter {
	f.Workspace, f.IncludeGlobal = ws, ws != ""
	return f
}

// instructions lists the standing instructions of workspace ws (and those
// of every workspace) in recall order, and the set of their ids. An
// instruction given in another workspace ("in this repo") is not one.
func (r Recaller) instructions(ctx context.Context, scope imprint.Scope, ws string) ([]recallItem, map[string]bool, error) {
	seen := map[string]bool{}
	if r.Memories == nil {
		return nil, seen, nil
	}
	ms, err := r.Memories.ListMemories(ctx, scope, inWorkspace(imprint.MemoryFilter{Type: imprint.MemoryInstruction, Limit: recallInstructions}, ws))
	if err != nil {
		return nil, nil, fmt.Errorf("recall instructions: %w", err)
	}
	// ListMemories is newest first; a stable sort keeps that among equals.
	slices.SortStableFunc(ms, func(a, b imprint.Memory) int {
		if (a.Priority == -1) != (b.Priority == -1) {
			if a.Priority == -1 {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
			return c
		}
		// The workspace's own before those of every workspace.
		return cmp.Compare(boolRank(a.Workspace == ""), boolRank(b.Workspace == ""))
	})
	items := make([]recallItem, 0, len(ms))
	for _, m := range ms {
		seen[m.ID] = true
		if promptguard.InstructionHarm(m.Content) != promptguard.HarmNone {
			continue // stored before the extractor refused such rules
		}
		items = append(items, recallItem{text: oneLine(m.Content, maxMemoryRunes), source: sourceNote(m), hit: memoryHit(m, 0)})
	}
	return items, seen, nil
}

// persona lists the scope's live persona memories, highest priority first
// (newest first among equals), adding their ids to seen so the relevant
// memories do not repeat them.
func (r Recaller) persona(ctx context.Context, scope imprint.Scope, ws string, seen map[string]bool) ([]recallItem, error) {
	if r.Memories == nil {
		return nil, nil
	}
	ms, err := r.Memories.ListMemories(ctx, scope, inWorkspace(imprint.MemoryFilter{Type: imprint.MemoryPersona, Limit: recallPersona}, ws))
	if err != nil {
		return nil, fmt.Errorf("recall persona: %w", err)
	}
	slices.SortStableFunc(ms, func(a, b imprint.Memory) int { return cmp.Compare(b.Priority, a.Priority) })
	items := make([]recallItem, 0, len(ms))
	for _, m := range ms {
		seen[m.ID] = true
		items = append(items, recallItem{text: oneLine(m.Content, maxMemoryRunes), hit: memoryHit(m, 0)})
	}
	return items, nil
}

// sourceNote says where an instruction came from: "(session S, messages
// m1, m2)", the first maxSourceIDs ids and how many more; "" when the
// memory names neither.
func sourceNote(m imprint.Memory) string {
	var parts []string
	if s := oneLine(m.SessionID, maxSourceIDRune); s != "" {
		parts = append(parts, "session "+s)
	}
	var ids []string
	for _, id := range m.SourceMessageIDs {
		if id = oneLine(id, maxSourceIDRune); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		word := "messages "
		if len(ids) == 1 {
			word = "message "
		}
		shown := strings.Join(ids[:min(len(ids), maxSourceIDs)], ", ")
		if more := len(ids) - maxSourceIDs; more > 0 {
			shown += fmt.Sprintf(" and %d more", more)
		}
		parts = append(parts, word+shown)
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// memories returns the relevant live memories not already listed as
// instructions, best first.
func (r Recaller) memories(ctx context.Context, q imprint.RecallQuery, vec []float32, seen map[string]bool) ([]recallItem, error) {
	hits, err := r.hybrid(ctx, q, imprint.KindMemory, "", vec, recallMemoryHits)
	if err != nil {
		return nil, fmt.Errorf("recall memories: %w", err)
	}
	items := make([]recallItem, 0, len(hits))
	for _, h := range hits {
		if seen[h.ID] {
			continue
		}
		seen[h.ID] = true
		if r.Memories == nil {
			items = append(items, recallItem{text: oneLine(h.Text, maxMemoryRunes), hit: h})
			continue
		}
		m, err := r.Memories.GetMemory(ctx, q.Scope, h.ID)
		if errors.Is(err, imprint.ErrNotFound) {
			continue // superseded or removed since the search
		}
		if err != nil {
			return nil, fmt.Errorf("recall memory %s: %w", h.ID, err)
		}
		if m.SupersededBy != nil {
			continue
		}
		if m.Type == imprint.MemoryInstruction && promptguard.InstructionHarm(m.Content) != promptguard.HarmNone {
			continue
		}
		text := oneLine(m.Content, maxMemoryRunes)
		if d := memoryDate(m); d != "" {
			text = "[" + d + "] " + text
		}
		items = append(items, recallItem{text: text, hit: memoryHit(m, h.Score)})
	}
	return items, nil
}

// traces returns the relevant traces, best first, each as task, action and
// what was learned.
func (r Recaller) traces(ctx context.Context, q imprint.RecallQuery, vec []float32) ([]recallItem, error) {
	hits, err := r.hybrid(ctx, q, imprint.KindTrace, q.SessionID, vec, recallTraceHits)
	if err != nil {
		return nil, fmt.Errorf("recall traces: %w", err)
	}
	items := make([]recallItem, 0, len(hits))
	for _, h := range hits {
		if r.Traces == nil {
			items = append(items, recallItem{text: oneLine(h.Text, maxTaskRunes+maxActionRunes), hit: h})
			continue
		}
		t, err := r.Traces.GetTrace(ctx, q.Scope, h.ID)
		if errors.Is(err, imprint.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("recall trace %s: %w", h.ID, err)
		}
		items = append(items, recallItem{text: traceLine(t), hit: h})
	}
	return items, nil
}

// messages returns the relevant messages of earlier conversations, best
// first, each as its date, speaker and text.
func (r Recaller) messages(ctx context.Context, q imprint.RecallQuery, vec []float32) ([]recallItem, error) {
	hits, err := r.hybrid(ctx, q, imprint.KindMessage, q.SessionID, vec, recallMessageHits)
	if err != nil {
		return nil, fmt.Errorf("recall messages: %w", err)
	}
	items := make([]recallItem, 0, len(hits))
	for _, h := range hits {
		text := oneLine(h.Text, maxMessageRunes)
		if r.Messages != nil && h.SessionID != nil {
			m, err := r.Messages.GetMessage(ctx, q.Scope, *h.SessionID, h.ID)
			if errors.Is(err, imprint.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("recall message %s: %w", h.ID, err)
			}
			if m.Speaker != "" {
				text = oneLine(m.Speaker, 40) + ": " + text
			}
			if !m.Timestamp.IsZero() {
				text = "[" + m.Timestamp.UTC().Format("2006-01-02") + "] " + text
			}
		}
		items = append(items, recallItem{text: text, hit: h})
	}
	return items, nil
}

// queryVector embeds the query text, or returns nil without an embedder or
// when embedding fails (recall then uses keywords only, as Search does).
func (r Recaller) queryVector(ctx context.Context, text string) []float32 {
	if r.Embedder == nil {
		return nil
	}
	vs, err := r.Embedder.Embed(ctx, []string{text})
	if err != nil || len(vs) != 1 || len(vs[0]) == 0 {
		return nil
	}
	return vs[0]
}

// hybrid is Search for one kind, scope-wide (in q.Workspace and in none
// when the recall names a workspace), with the recall's cosine floor on
// the vector list. With sessionID, the session's own keyword ranking is
// fused in too, and so is the workspace's, so that of two equally
// relevant records the current session's, then the current workspace's,
// comes first.
func (r Recaller) hybrid(ctx context.Context, q imprint.RecallQuery, kind imprint.Kind, sessionID string, vec []float32, limit int) ([]imprint.Hit, error) {
	depth := depthOf(limit)
	var text, vecs [][]imprint.Hit
	global := q.Workspace != ""
	wide := imprint.TextQuery{Scope: q.Scope, Kind: kind, Text: q.Text, Workspace: q.Workspace, IncludeGlobal: global, Limit: depth}
	queries := []imprint.TextQuery{wide}
	if sessionID != "" {
		own := wide
		own.SessionID = sessionID
		queries = append(queries, own)
	}
	if global {
		own := wide
		own.IncludeGlobal = false
		queries = append(queries, own)
	}
	for _, tq := range queries {
		th, err := r.Store.SearchText(ctx, tq)
		if err != nil {
			return nil, fmt.Errorf("search %s text: %w", kind, err)
		}
		text = append(text, th)
	}
	lexical := imprint.IsLexical(r.Embedder)
	// A lexical embedder's vectors only fill places (fuseHybrid): not
	// needed when the keywords filled them all.
	if vec != nil && !(lexical && len(Fuse(limit, text...)) >= limit) {
		floor := r.MinScore
		switch {
		case floor == 0:
			floor = max(minScore(r.Embedder), DefaultRecallMinScore)
		case floor < 0:
			floor = 0
		}
		vh, err := r.Store.SearchVector(ctx, imprint.VectorQuery{Scope: q.Scope, Kind: kind, Vector: vec, Embedder: r.Embedder.Name(),
			Workspace: q.Workspace, IncludeGlobal: global, MinScore: floor, Limit: depth})
		if err != nil {
			return nil, fmt.Errorf("search %s vectors: %w", kind, err)
		}
		vecs = append(vecs, vh)
	}
	return fuseHybrid(limit, depth, lexical, text, vecs), nil
}

// layout writes the block: the opening tag and header, then each
// section's title and bullets, in order, up to the first bullet that would
// take the block over budget, so a bullet never displaces a more important
// one, then the closing tag. A bullet that says what an earlier one said
// (the same words, whatever the case, spacing or date) is left out: two
// records of one fact, or a trace and a memory of the same line, cost the
// budget once. The cost of each piece (the tags included) is
// estimated on its own; since the estimator rounds up per call, the sum
// bounds the estimate of the joined text.
func layout(budget int, titles []string, sections [][]recallItem) (string, []imprint.Hit) {
	hits := []imprint.Hit{}
	var b strings.Builder
	used := imprint.EstimateTokens(RecallOpenTag+"\n"+recallHeader+"\n") + imprint.EstimateTokens(RecallCloseTag)
	said := map[string]bool{}
	for i, items := range sections {
		started := false
		for _, it := range items {
			key := lineKey(it.text)
			if said[key] {
				continue
			}
			said[key] = true
			line := it.text
			if it.source != "" {
				line += " " + it.source
			}
			bullet := recallBulletPrefix + defuseRecallTags(line) + "\n"
			cost := imprint.EstimateTokens(bullet)
			if !started {
				cost += imprint.EstimateTokens(titles[i] + "\n")
			}
			if used+cost > budget {
				return finish(&b, hits)
			}
			if !started {
				b.WriteString(titles[i] + "\n")
				started = true
			}
			b.WriteString(bullet)
			used += cost
			hits = append(hits, it.hit)
		}
	}
	return finish(&b, hits)
}

// lineKey is what two bullets saying the same thing share: the text
// without a leading "[date] ", lower case, spaces folded.
func lineKey(text string) string {
	if strings.HasPrefix(text, "[") {
		if i := strings.Index(text, "] "); i > 0 {
			text = text[i+2:]
		}
	}
	return strings.Join(strings.Fields(strings.ToLower(text)), " ")
}

// recallTagInText matches a recall tag inside a record's text: shown as
// is, a closing tag in a bullet would end the block early for a sanitizer,
// which would then keep the rest of the block as the user's words.
var recallTagInText = regexp.MustCompile(`(?i)<(/?\s*imprint-recall)`)

// defuseRecallTags replaces the '<' of each recall tag in text by '‹'. Most
// texts have no '<' at all and are returned without running the pattern.
func defuseRecallTags(text string) string {
	if strings.IndexByte(text, '<') < 0 {
		return text
	}
	return recallTagInText.ReplaceAllString(text, "‹$1")
}

// finish encloses a block with bullets in the tags, the header first
// inside them; a block without any is empty.
func finish(b *strings.Builder, hits []imprint.Hit) (string, []imprint.Hit) {
	if len(hits) == 0 {
		return "", hits
	}
	return RecallOpenTag + "\n" + recallHeader + "\n" + b.String() + RecallCloseTag, hits
}

// memoryHit is the search hit that shows m.
func memoryHit(m imprint.Memory, score float64) imprint.Hit {
	h := imprint.Hit{Kind: imprint.KindMemory, ID: m.ID, Score: score, Text: m.Content, SourceMessageIDs: m.SourceMessageIDs}
	if m.SessionID != "" {
		s := m.SessionID
		h.SessionID = &s
	}
	if h.SourceMessageIDs == nil {
		h.SourceMessageIDs = []string{}
	}
	return h
}

// memoryDate is the date shown for an episodic memory: its activity time
// when the extractor gave one, else its earliest source message's date.
func memoryDate(m imprint.Memory) string {
	if m.Type != imprint.MemoryEpisodic {
		return ""
	}
	day := func(s string) string {
		t, err := imprint.ParseTime(s)
		if err != nil || t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02")
	}
	start, end := day(m.Metadata.ActivityStartTime), day(m.Metadata.ActivityEndTime)
	if start == "" && len(m.Timestamps) > 0 && !m.Timestamps[0].IsZero() {
		start = m.Timestamps[0].UTC().Format("2006-01-02")
	}
	if start != "" && end != "" && end != start {
		return start + " to " + end
	}
	return start
}

// traceLine is the bullet of a trace.
func traceLine(t imprint.Trace) string {
	parts := []string{}
	if s := oneLine(t.UserText, maxTaskRunes); s != "" {
		parts = append(parts, "Task: "+s)
	}
	action := oneLine(t.AgentText, maxActionRunes)
	if len(t.ToolCalls) > 0 {
		names := make([]string, 0, len(t.ToolCalls))
		for _, c := range t.ToolCalls {
			if c.Name != "" && !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
		if len(names) > 0 {
			action = strings.TrimSpace(action + " (tools: " + strings.Join(names, ", ") + ")")
		}
	}
	if action != "" {
		parts = append(parts, "Did: "+action)
	}
	if t.Reflection != nil {
		if s := oneLine(*t.Reflection, maxReflectionRunes); s != "" {
			parts = append(parts, "Learned: "+s)
		}
	}
	return strings.Join(parts, " | ")
}

// oneLine collapses whitespace (newlines included) to single spaces and
// cuts s to at most n runes, marking a cut with an ellipsis.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// boolRank is 0 for false and 1 for true, for sorting.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
