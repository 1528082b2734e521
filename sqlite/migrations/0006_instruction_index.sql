-- Every recall lists the scope's standing instructions (search.Recaller):
-- without an index that was a scan of all of the scope's memories, most of
-- the time of a recall at 100k memories. The index is partial, so only
-- instruction memories (a few per scope) pay for it on the write path;
-- ListMemories names the type as a literal for the planner to use it.
CREATE INDEX memories_instructions ON memories (tenant, user_id, agent, updated_at) WHERE type = 'instruction';
