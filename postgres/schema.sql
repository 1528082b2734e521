-- imprint schema up to 0017_traces_inline.sql: the schema the migrations up
-- to that one make, for a new database, in one file that runs as the first
-- migration's halves do (initschema.go): the columns, options and tables
-- the later ones add are part of the tables as they are created. An
-- existing database is migrated by the files of migrations/ instead, and
-- the migrations after the one named here run after this file. A change of
-- the schema is a new migration, then the same change here (and the name
-- above); TestInitHalvesAtOnce checks that both make the same schema.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The keyword index's words are made by imprint (keyword.IndexTexts) and
-- stemmed here by Porter's original stemmer (0009), without stop words: a
-- query made only of stop words still finds them.
CREATE TEXT SEARCH DICTIONARY imprint_stem (TEMPLATE = snowball, Language = porter);
CREATE TEXT SEARCH CONFIGURATION imprint (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION imprint ALTER MAPPING FOR asciiword, word, numword, asciihword, hword,
    hword_part, hword_asciipart, hword_numpart WITH imprint_stem;

CREATE TABLE sessions (
    rid                     bigserial PRIMARY KEY,
    tenant                  text NOT NULL,
    user_id                 text NOT NULL,
    agent                   text NOT NULL,
    workspace               text NOT NULL DEFAULT '',
    id                      text NOT NULL,
    cursor_seq              bigint NOT NULL DEFAULT 0,
    last_scene_name         text NOT NULL DEFAULT '',
    rounds_since_extraction integer NOT NULL DEFAULT 0,
    extraction_due          boolean NOT NULL DEFAULT false,
    between_people          boolean NOT NULL DEFAULT false,
    last_extracted_at       timestamptz,
    last_seq                bigint NOT NULL DEFAULT 0,
    last_message_at         timestamptz,
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL,
    UNIQUE (tenant, user_id, agent, id)
);
CREATE INDEX sessions_created ON sessions (tenant, user_id, agent, created_at);
CREATE INDEX sessions_due ON sessions (last_message_at) WHERE extraction_due AND last_seq > cursor_seq;
CREATE INDEX sessions_pending ON sessions (last_message_at) WHERE last_seq > cursor_seq;

-- words holds the message's own words (weight A) and the dates it is about
-- (weight B); who its speaker, queried alone; cjk its CJK runs of three or
-- more characters for substring search (pg_trgm).
CREATE TABLE messages (
    seq         bigserial PRIMARY KEY,
    tenant      text NOT NULL,
    user_id     text NOT NULL,
    agent       text NOT NULL,
    workspace   text NOT NULL DEFAULT '',
    session_id  text NOT NULL,
    id          text NOT NULL,
    role        text NOT NULL,
    content     text NOT NULL,
    ts          timestamptz,
    recorded_at timestamptz NOT NULL,
    speaker     text NOT NULL DEFAULT '',
    vec         real[],
    embedder    text NOT NULL DEFAULT '',
    dim         integer NOT NULL DEFAULT 0,
    words       tsvector NOT NULL,
    who         tsvector NOT NULL,
    cjk         text NOT NULL DEFAULT '',
    ntok        integer NOT NULL DEFAULT 0,
    UNIQUE (tenant, user_id, agent, session_id, id)
);
CREATE INDEX messages_session_seq ON messages (tenant, user_id, agent, session_id, seq);
CREATE INDEX messages_unembedded ON messages (tenant, user_id, agent, seq) WHERE vec IS NULL;
CREATE INDEX messages_words ON messages USING gin (words);
CREATE INDEX messages_who ON messages USING gin (who);
CREATE INDEX messages_cjk ON messages USING gin (cjk gin_trgm_ops) WHERE cjk <> '';

CREATE TABLE episodes (
    id         text PRIMARY KEY,
    tenant     text NOT NULL,
    user_id    text NOT NULL,
    agent      text NOT NULL,
    workspace  text NOT NULL DEFAULT '',
    session_id text NOT NULL,
    status     text NOT NULL DEFAULT '',
    closed_by  text NOT NULL DEFAULT '',
    meta       text NOT NULL DEFAULT '{}',
    turns      text NOT NULL DEFAULT '[]',
    trace_ids  text NOT NULL DEFAULT '[]',
    started_at timestamptz,
    ended_at   timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX episodes_session ON episodes (tenant, user_id, agent, session_id, created_at);
CREATE INDEX episodes_created ON episodes (tenant, user_id, agent, created_at);
CREATE INDEX episodes_open ON episodes (tenant, user_id, agent, session_id, created_at) WHERE status = 'open';
CREATE INDEX episodes_open_idle ON episodes (updated_at) WHERE status = 'open';

-- The turns of open episodes, a row each (an append writes only its turns).
CREATE TABLE episode_turns (
    rid        bigserial PRIMARY KEY,
    episode_id text NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
    seq        integer NOT NULL,
    turn_id    text,
    turn       text NOT NULL,
    UNIQUE (episode_id, seq)
);
CREATE INDEX episode_turns_id ON episode_turns (episode_id, turn_id) WHERE turn_id IS NOT NULL;

CREATE TABLE traces (
    rid               bigserial PRIMARY KEY,
    id                text NOT NULL UNIQUE,
    episode_id        text NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
    tenant            text NOT NULL,
    user_id           text NOT NULL,
    agent             text NOT NULL,
    workspace         text NOT NULL DEFAULT '',
    session_id        text NOT NULL,
    step_key          text NOT NULL,
    step_index        integer NOT NULL,
    ts                timestamptz,
    user_text         text NOT NULL DEFAULT '',
    agent_text        text NOT NULL DEFAULT '',
    tool_calls        text NOT NULL DEFAULT '[]',
    reflection        text,
    reflection_source text NOT NULL DEFAULT '',
    alpha             double precision NOT NULL DEFAULT 0,
    usable            boolean NOT NULL DEFAULT false,
    value             double precision NOT NULL DEFAULT 0,
    priority          double precision NOT NULL DEFAULT 0,
    r_human           double precision,
    depth             integer NOT NULL DEFAULT 0,
    is_subagent       boolean NOT NULL DEFAULT false,
    truncated         boolean NOT NULL DEFAULT false,
    vec_summary       real[],
    vec_action        real[],
    embedder          text NOT NULL DEFAULT '',
    dim               integer NOT NULL DEFAULT 0,
    words             tsvector NOT NULL,
    cjk               text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL,
    ntok              integer NOT NULL DEFAULT 0,
    UNIQUE (episode_id, step_key)
) WITH (toast_tuple_target = 8160);
CREATE INDEX traces_scope_episode ON traces (tenant, user_id, agent, episode_id, step_index);
CREATE INDEX traces_scope_session ON traces (tenant, user_id, agent, session_id);
CREATE INDEX traces_words ON traces USING gin (words);
CREATE INDEX traces_cjk ON traces USING gin (cjk gin_trgm_ops) WHERE cjk <> '';

-- Large columns are compressed with lz4 where the server has it (0005, 0010).
DO $$
BEGIN
    ALTER TABLE messages ALTER COLUMN vec SET COMPRESSION lz4, ALTER COLUMN content SET COMPRESSION lz4;
    ALTER TABLE traces ALTER COLUMN vec_summary SET COMPRESSION lz4, ALTER COLUMN vec_action SET COMPRESSION lz4,
        ALTER COLUMN user_text SET COMPRESSION lz4, ALTER COLUMN agent_text SET COMPRESSION lz4,
        ALTER COLUMN tool_calls SET COMPRESSION lz4;
    ALTER TABLE episodes ALTER COLUMN turns SET COMPRESSION lz4, ALTER COLUMN meta SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END $$;

CREATE TABLE memories (
    rid                bigserial PRIMARY KEY,
    id                 text NOT NULL UNIQUE,
    tenant             text NOT NULL,
    user_id            text NOT NULL,
    agent              text NOT NULL,
    workspace          text NOT NULL DEFAULT '',
    session_id         text NOT NULL DEFAULT '',
    content            text NOT NULL,
    type               text NOT NULL,
    priority           integer NOT NULL DEFAULT 0,
    scene_name         text NOT NULL DEFAULT '',
    source_message_ids text NOT NULL DEFAULT '[]',
    metadata           text NOT NULL DEFAULT '{}',
    timestamps         text NOT NULL DEFAULT '[]',
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    version            integer NOT NULL DEFAULT 1,
    superseded_by      text,
    supersedes         text NOT NULL DEFAULT '[]',
    extractor          text NOT NULL DEFAULT '',
    content_hash       text NOT NULL DEFAULT '',
    vec                real[],
    embedder           text NOT NULL DEFAULT '',
    dim                integer NOT NULL DEFAULT 0,
    words              tsvector NOT NULL,
    cjk                text NOT NULL DEFAULT '',
    forgotten_at       timestamptz,
    ntok               integer NOT NULL DEFAULT 0
);
DO $$
BEGIN
    ALTER TABLE memories ALTER COLUMN vec SET COMPRESSION lz4, ALTER COLUMN content SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END $$;
CREATE INDEX memories_live_hash ON memories (tenant, user_id, agent, content_hash) WHERE superseded_by IS NULL;
CREATE INDEX memories_updated ON memories (tenant, user_id, agent, updated_at);
CREATE INDEX memories_session ON memories (tenant, user_id, agent, session_id, updated_at);
CREATE INDEX memories_superseded_by ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX memories_instructions ON memories (tenant, user_id, agent, updated_at) WHERE type = 'instruction';
CREATE INDEX memories_words ON memories USING gin (words) WHERE superseded_by IS NULL;
CREATE INDEX memories_cjk ON memories USING gin (cjk gin_trgm_ops) WHERE superseded_by IS NULL AND cjk <> '';

CREATE TABLE llm_calls (
    rid               bigserial PRIMARY KEY,
    op                text NOT NULL,
    provider          text NOT NULL DEFAULT '',
    model             text NOT NULL DEFAULT '',
    prompt_tokens     integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    estimated         boolean NOT NULL DEFAULT false,
    latency_ms        bigint NOT NULL DEFAULT 0,
    outcome           text NOT NULL DEFAULT '',
    attempt           integer NOT NULL DEFAULT 0,
    at                timestamptz NOT NULL,
    tenant            text NOT NULL DEFAULT '',
    user_id           text NOT NULL DEFAULT '',
    agent             text NOT NULL DEFAULT ''
);
CREATE INDEX llm_calls_at ON llm_calls (at);
CREATE INDEX llm_calls_scope ON llm_calls (tenant, user_id, agent, at);

-- The store's own durable jobs (without River).
CREATE TABLE jobs (
    id           bigserial PRIMARY KEY,
    kind         text NOT NULL CHECK (kind <> ''),
    tenant       text NOT NULL,
    user_id      text NOT NULL,
    agent        text NOT NULL,
    workspace    text NOT NULL DEFAULT '',
    session_id   text NOT NULL DEFAULT '',
    episode_id   text NOT NULL DEFAULT '',
    state        text NOT NULL CHECK (state IN ('available', 'running', 'retryable', 'failed', 'completed')),
    attempts     integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL DEFAULT 0,
    last_error   text NOT NULL DEFAULT '',
    unique_key   text NOT NULL DEFAULT '',
    run_at       timestamptz NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
CREATE INDEX jobs_ready ON jobs (run_at, id) WHERE state IN ('available', 'retryable');
CREATE UNIQUE INDEX jobs_unique ON jobs (unique_key)
    WHERE unique_key <> '' AND state IN ('available', 'running', 'retryable');
CREATE INDEX jobs_running_session ON jobs (tenant, user_id, agent, session_id, kind) WHERE state = 'running';
CREATE INDEX jobs_state_scope ON jobs (state, tenant, user_id, agent, id);

CREATE TABLE api_keys (
    id         text PRIMARY KEY,
    name       text NOT NULL DEFAULT '',
    tenant     text NOT NULL,
    user_id    text NOT NULL DEFAULT '',
    agent      text NOT NULL DEFAULT '',
    read_only  boolean NOT NULL DEFAULT false,
    token_hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);

-- 0003: the leases of the nodes (imprint serve processes) sharing the
-- database through River.
CREATE TABLE imprint_nodes (
    id         text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    renewed_at timestamptz NOT NULL DEFAULT now()
);

-- 0004: the mark of a copy of another store into this one (imprint migrate).
CREATE TABLE load_mark (
    id   integer PRIMARY KEY CHECK (id = 1),
    mark text NOT NULL
);
