package curate

import (
	"context"
	"encoding/json"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/extract"
)

// RebuildDeps are what a rebuild reads and writes.
type RebuildDeps struct {
	// Store is the store to fill; it holds no messages or memories yet
	// (sqlite.DB.DropRecords empties a copy of the old database).
	Store imprint.Store
	// Conversations and Records are the data dir's shards
	// (<data_dir>/conversations and <data_dir>/records).
	Conversations, Records imprint.LogReader
	// Embedder embeds the messages and memories again; nil stores them
	// without vectors.
	Embedder imprint.Embedder
	// Cursors are where the sessions' extraction stood before (from the
	// old database), by message id; a session without one, or whose
	// message is gone, gets its cursor from its memories' sources.
	Cursors []imprint.SessionCursor
}

// Rebuild fills d.Store from the JSONL shards: every message of the
// conversations log (sessions are created as the messages are appended),
// then the memories of the records log as extract.ReplayWith replays them
// (the live set, forgotten ones retired; purged ones are not in the shards
// any more), then each session's extraction cursor is put back on the
// message d.Cursors names, else on the newest message a memory of the
// session came from, so extraction does not redo what the memories hold. ErrInvalid for a shard line that is not a message
// or record line, naming file and line.
func Rebuild(ctx context.Context, d RebuildDeps) (ExportStats, error) {
	var stats ExportStats
	rs := &restorer{d: RestoreDeps{Store: d.Store, Embedder: d.Embedder}, stats: &stats, cursors: map[sessionKey]cursorAt{}}
	var sessions []sessionKey
	seen := map[sessionKey]bool{}
	if d.Conversations != nil {
		err := d.Conversations.Read(func(line []byte) error {
			var m imprint.Message
			if err := json.Unmarshal(line, &m); err != nil {
				return imprint.Invalidf("conversation line: %v", err)
			}
			k := sessionKey{m.Scope, m.SessionID}
			if !seen[k] {
				seen[k] = true
				sessions = append(sessions, k)
			}
			if k != rs.msgKey || len(rs.msgs) >= restoreBatch {
				if err := rs.flushMessages(ctx); err != nil {
					return err
				}
				rs.msgKey = k
			}
			rs.msgs = append(rs.msgs, m)
			return nil
		})
		if err == nil {
			err = rs.flushMessages(ctx)
		}
		if err != nil {
			return stats, fmt.Errorf("rebuild messages: %w", err)
		}
	}
	stats.Sessions = len(sessions)
	if d.Records != nil {
		rst, err := extract.ReplayWith(ctx, d.Store, d.Records, d.Embedder)
		if err != nil {
			return stats, fmt.Errorf("rebuild memories: %w", err)
		}
		stats.Memories = rst.Written
	}
	known := map[sessionKey]string{}
	for _, c := range d.Cursors {
		known[sessionKey{c.Scope, c.SessionID}] = c.MessageID
	}
	for _, k := range sessions {
		if id, ok := known[k]; ok {
			if m, err := d.Store.GetMessage(ctx, k.scope, k.id, id); err == nil {
				s, err := d.Store.GetSession(ctx, k.scope, k.id)
				if err == nil {
					err = d.Store.AdvanceCursor(ctx, k.scope, k.id, m.Seq, s.LastSceneName, s.LastExtractedAt.Time)
				}
				if err != nil {
					return stats, fmt.Errorf("rebuild cursor of session %s: %w", k.id, err)
				}
				continue
			}
		}
		if err := cursorOnSources(ctx, d.Store, k); err != nil {
			return stats, fmt.Errorf("rebuild cursor of session %s: %w", k.id, err)
		}
	}
	return stats, nil
}

// cursorOnSources moves the session's cursor to the newest message that a
// memory of the session (any version) names as a source.
func cursorOnSources(ctx context.Context, st imprint.Store, k sessionKey) error {
	ms, err := st.ListMemories(ctx, k.scope, imprint.MemoryFilter{SessionID: k.id, AllVersions: true, Limit: imprint.NoLimit})
	if err != nil || len(ms) == 0 {
		return err
	}
	var top int64
	scene := ""
	for _, m := range ms {
		for _, id := range m.SourceMessageIDs {
			msg, err := st.GetMessage(ctx, k.scope, k.id, id)
			if err != nil {
				continue // purged, or of another session
			}
			if msg.Seq > top {
				top, scene = msg.Seq, m.SceneName
			}
		}
	}
	if top == 0 {
		return nil
	}
	return st.AdvanceCursor(ctx, k.scope, k.id, top, scene, ms[0].UpdatedAt.Time)
}
