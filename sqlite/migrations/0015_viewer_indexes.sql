-- 0015: what the web viewer lists and counts, without reading every row of
-- a scope: its episodes newest first, and its live memories by type.
CREATE INDEX episodes_created ON episodes (tenant, user_id, agent, created_at);
-- The live filter's columns are in the index so the count reads the index
-- only (they are NULL in every entry).
CREATE INDEX memories_live_type ON memories (tenant, user_id, agent, type, superseded_by, forgotten_at)
    WHERE superseded_by IS NULL AND forgotten_at IS NULL;
