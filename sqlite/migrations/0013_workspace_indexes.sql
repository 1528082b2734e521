-- Issue 13: a record's workspace (its project) is an attribute and a
-- filter, not part of its identity. Listings, searches and dedup narrowed
-- to a workspace read these indexes, scoped by (tenant, user_id, agent,
-- workspace) like every other.
CREATE INDEX memories_workspace ON memories (tenant, user_id, agent, workspace, updated_at) WHERE superseded_by IS NULL;
CREATE INDEX traces_workspace ON traces (tenant, user_id, agent, workspace, episode_id, step_index);
CREATE INDEX messages_workspace ON messages (tenant, user_id, agent, workspace, session_id, seq);
CREATE INDEX episodes_workspace ON episodes (tenant, user_id, agent, workspace, created_at);
