-- 0002: durable jobs and live episodes (imprint serve).

CREATE TABLE jobs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT NOT NULL CHECK (kind <> ''),
    tenant       TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    agent        TEXT NOT NULL,
    workspace    TEXT NOT NULL DEFAULT '',
    session_id   TEXT NOT NULL DEFAULT '',
    episode_id   TEXT NOT NULL DEFAULT '',
    state        TEXT NOT NULL CHECK (state IN ('available', 'running', 'retryable', 'failed', 'completed')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT NOT NULL DEFAULT '',
    unique_key   TEXT NOT NULL DEFAULT '',
    run_at       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
-- Claiming walks the ready jobs in run_at order.
CREATE INDEX jobs_ready ON jobs (run_at, id) WHERE state IN ('available', 'retryable');
-- One unfinished job per unique key.
CREATE UNIQUE INDEX jobs_unique ON jobs (unique_key)
    WHERE unique_key <> '' AND state IN ('available', 'running', 'retryable');
-- Running jobs of a session (one extraction at a time).
CREATE INDEX jobs_running_session ON jobs (tenant, user_id, agent, session_id, kind) WHERE state = 'running';
-- Counts and lists by state, per scope and store-wide.
CREATE INDEX jobs_state_scope ON jobs (state, tenant, user_id, agent, id);
CREATE INDEX jobs_state_id ON jobs (state, id);

-- The open episode of a session, and open episodes by last append.
CREATE INDEX episodes_open ON episodes (tenant, user_id, agent, session_id, created_at) WHERE status = 'open';
CREATE INDEX episodes_open_idle ON episodes (updated_at) WHERE status = 'open';

-- Sessions remember their newest message so sessions with pending messages
-- are found by index: last_seq is the highest messages.seq recorded,
-- last_message_at when it was recorded.
ALTER TABLE sessions ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN last_message_at TEXT NOT NULL DEFAULT '';
UPDATE sessions SET
    last_seq = COALESCE((SELECT MAX(m.seq) FROM messages m
        WHERE m.tenant = sessions.tenant AND m.user_id = sessions.user_id AND m.agent = sessions.agent
          AND m.session_id = sessions.id), 0),
    last_message_at = COALESCE((SELECT m.recorded_at FROM messages m
        WHERE m.tenant = sessions.tenant AND m.user_id = sessions.user_id AND m.agent = sessions.agent
          AND m.session_id = sessions.id ORDER BY m.seq DESC LIMIT 1), '');
CREATE INDEX sessions_pending ON sessions (last_message_at) WHERE last_seq > cursor_seq;
