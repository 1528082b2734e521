-- API keys of imprint serve (imprint keys): each opens one tenant, or one
-- user or agent of it, read-write or read-only. Only the SHA-256 of a
-- token is kept; an empty user or agent covers every user or agent.
CREATE TABLE api_keys (
	id          TEXT PRIMARY KEY,
	name        TEXT NOT NULL DEFAULT '',
	tenant      TEXT NOT NULL,
	user_id     TEXT NOT NULL DEFAULT '',
	agent       TEXT NOT NULL DEFAULT '',
	read_only   INTEGER NOT NULL DEFAULT 0,
	token_hash  BLOB NOT NULL UNIQUE,
	created_at  TEXT NOT NULL,
	revoked_at  TEXT
) STRICT;
