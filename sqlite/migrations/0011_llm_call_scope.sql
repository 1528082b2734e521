-- The call log names the scope of each call, so that llm.budget can count a
-- scope's calls and prompt tokens of the last hour across restarts. Calls
-- recorded before this migration, and requests that name no scope, keep ''.
ALTER TABLE llm_calls ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE llm_calls ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
ALTER TABLE llm_calls ADD COLUMN agent TEXT NOT NULL DEFAULT '';
CREATE INDEX llm_calls_scope ON llm_calls (tenant, user_id, agent, at);
