-- 0001: the whole schema of imprint's embedded store.
-- Times are TEXT in imprint.TimeLayout (RFC 3339 UTC, milliseconds, fixed
-- width), so they sort as strings; '' is the zero time. Scope columns are
-- tenant, user_id, agent; workspace is kept but does not isolate.

CREATE TABLE sessions (
    rid                     INTEGER PRIMARY KEY,
    tenant                  TEXT NOT NULL,
    user_id                 TEXT NOT NULL,
    agent                   TEXT NOT NULL,
    workspace               TEXT NOT NULL DEFAULT '',
    id                      TEXT NOT NULL,
    cursor_seq              INTEGER NOT NULL DEFAULT 0,
    last_scene_name         TEXT NOT NULL DEFAULT '',
    rounds_since_extraction INTEGER NOT NULL DEFAULT 0,
    extraction_due          INTEGER NOT NULL DEFAULT 0,
    last_extracted_at       TEXT NOT NULL DEFAULT '',
    created_at              TEXT NOT NULL,
    updated_at              TEXT NOT NULL,
    UNIQUE (tenant, user_id, agent, id)
);
CREATE INDEX sessions_created ON sessions (tenant, user_id, agent, created_at);
CREATE INDEX sessions_due ON sessions (extraction_due) WHERE extraction_due = 1;

CREATE TABLE messages (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant      TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    agent       TEXT NOT NULL,
    workspace   TEXT NOT NULL DEFAULT '',
    session_id  TEXT NOT NULL,
    id          TEXT NOT NULL,
    role        TEXT NOT NULL,
    content     TEXT NOT NULL,
    timestamp   TEXT NOT NULL DEFAULT '',
    recorded_at TEXT NOT NULL,
    speaker     TEXT NOT NULL DEFAULT '',
    vec         BLOB,
    embedder    TEXT NOT NULL DEFAULT '',
    dim         INTEGER NOT NULL DEFAULT 0,
    UNIQUE (tenant, user_id, agent, session_id, id)
);
CREATE INDEX messages_session_seq ON messages (tenant, user_id, agent, session_id, seq);
CREATE INDEX messages_embedder ON messages (embedder) WHERE vec IS NOT NULL;

CREATE TABLE episodes (
    id         TEXT PRIMARY KEY,
    tenant     TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    agent      TEXT NOT NULL,
    workspace  TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL,
    status     TEXT NOT NULL DEFAULT '',
    closed_by  TEXT NOT NULL DEFAULT '',
    meta       TEXT NOT NULL DEFAULT '{}',
    turns      TEXT NOT NULL DEFAULT '[]',
    trace_ids  TEXT NOT NULL DEFAULT '[]',
    started_at TEXT NOT NULL DEFAULT '',
    ended_at   TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX episodes_session ON episodes (tenant, user_id, agent, session_id, created_at);

CREATE TABLE traces (
    rid               INTEGER PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    episode_id        TEXT NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
    tenant            TEXT NOT NULL,
    user_id           TEXT NOT NULL,
    agent             TEXT NOT NULL,
    workspace         TEXT NOT NULL DEFAULT '',
    session_id        TEXT NOT NULL,
    step_key          TEXT NOT NULL,
    step_index        INTEGER NOT NULL,
    ts                TEXT NOT NULL DEFAULT '',
    user_text         TEXT NOT NULL DEFAULT '',
    agent_text        TEXT NOT NULL DEFAULT '',
    tool_calls        TEXT NOT NULL DEFAULT '[]',
    reflection        TEXT,
    reflection_source TEXT NOT NULL DEFAULT '',
    alpha             REAL NOT NULL DEFAULT 0,
    usable            INTEGER NOT NULL DEFAULT 0,
    value             REAL NOT NULL DEFAULT 0,
    priority          REAL NOT NULL DEFAULT 0,
    r_human           REAL,
    depth             INTEGER NOT NULL DEFAULT 0,
    is_subagent       INTEGER NOT NULL DEFAULT 0,
    truncated         INTEGER NOT NULL DEFAULT 0,
    vec_summary       BLOB,
    vec_action        BLOB,
    embedder          TEXT NOT NULL DEFAULT '',
    dim               INTEGER NOT NULL DEFAULT 0,
    created_at        TEXT NOT NULL,
    UNIQUE (episode_id, step_key)
);
CREATE INDEX traces_scope_episode ON traces (tenant, user_id, agent, episode_id, step_index);
CREATE INDEX traces_scope_session ON traces (tenant, user_id, agent, session_id);
CREATE INDEX traces_embedder ON traces (embedder) WHERE vec_summary IS NOT NULL OR vec_action IS NOT NULL;

CREATE TABLE memories (
    rid                INTEGER PRIMARY KEY,
    id                 TEXT NOT NULL UNIQUE,
    tenant             TEXT NOT NULL,
    user_id            TEXT NOT NULL,
    agent              TEXT NOT NULL,
    workspace          TEXT NOT NULL DEFAULT '',
    session_id         TEXT NOT NULL DEFAULT '',
    content            TEXT NOT NULL,
    type               TEXT NOT NULL,
    priority           INTEGER NOT NULL DEFAULT 0,
    scene_name         TEXT NOT NULL DEFAULT '',
    source_message_ids TEXT NOT NULL DEFAULT '[]',
    metadata           TEXT NOT NULL DEFAULT '{}',
    timestamps         TEXT NOT NULL DEFAULT '[]',
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    version            INTEGER NOT NULL DEFAULT 1,
    superseded_by      TEXT,
    supersedes         TEXT NOT NULL DEFAULT '[]',
    extractor          TEXT NOT NULL DEFAULT '',
    content_hash       TEXT NOT NULL DEFAULT '',
    vec                BLOB,
    embedder           TEXT NOT NULL DEFAULT '',
    dim                INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX memories_live_hash ON memories (tenant, user_id, agent, content_hash) WHERE superseded_by IS NULL;
CREATE INDEX memories_updated ON memories (tenant, user_id, agent, updated_at);
CREATE INDEX memories_session ON memories (tenant, user_id, agent, session_id, updated_at);
CREATE INDEX memories_superseded_by ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX memories_embedder ON memories (embedder) WHERE vec IS NOT NULL;

CREATE TABLE llm_calls (
    rid               INTEGER PRIMARY KEY,
    op                TEXT NOT NULL,
    provider          TEXT NOT NULL DEFAULT '',
    model             TEXT NOT NULL DEFAULT '',
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    estimated         INTEGER NOT NULL DEFAULT 0,
    latency_ms        INTEGER NOT NULL DEFAULT 0,
    outcome           TEXT NOT NULL DEFAULT '',
    attempt           INTEGER NOT NULL DEFAULT 0,
    at                TEXT NOT NULL
);
CREATE INDEX llm_calls_at ON llm_calls (at);

-- Full-text indexes, one pair per kind, keyed by the row's integer id
-- (messages.seq, traces.rid, memories.rid). *_words holds the text's words
-- (porter-stemmed by unicode61) plus Go-computed overlapping bigrams of its
-- CJK runs, so Latin words and 2-character CJK queries hit a compact index.
-- *_fts holds only the CJK runs under the trigram tokenizer, for CJK
-- phrases of 3+ characters. Both are contentless: the text lives in the
-- row, and the store deletes index rows in the same transaction.
CREATE VIRTUAL TABLE message_words USING fts5 (text, tokenize = 'porter unicode61', content = '', contentless_delete = 1);
CREATE VIRTUAL TABLE message_fts USING fts5 (text, tokenize = 'trigram', content = '', contentless_delete = 1);
CREATE VIRTUAL TABLE trace_words USING fts5 (text, tokenize = 'porter unicode61', content = '', contentless_delete = 1);
CREATE VIRTUAL TABLE trace_fts USING fts5 (text, tokenize = 'trigram', content = '', contentless_delete = 1);
CREATE VIRTUAL TABLE memory_words USING fts5 (text, tokenize = 'porter unicode61', content = '', contentless_delete = 1);
CREATE VIRTUAL TABLE memory_fts USING fts5 (text, tokenize = 'trigram', content = '', contentless_delete = 1);
