-- 0016: the memories that are not live (superseded or forgotten) in an
-- index of their own, so that a keyword search can count them from the
-- index alone, up to what it needs to know: in a store of few retired
-- memories a term the planner estimates common is then common without
-- counting its live records (prune.go, checkCommon).
CREATE INDEX memories_retired ON memories (rid) WHERE superseded_by IS NOT NULL OR forgotten_at IS NOT NULL;
