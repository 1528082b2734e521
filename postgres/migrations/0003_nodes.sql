-- 0003: the leases of the nodes (imprint serve processes) sharing this
-- database through River: a node renews its lease every few seconds, and
-- the running jobs of a node whose lease lapsed are handed back
-- (schedule.RiverConfig.Nodes). Times are the database's clock, so the
-- nodes' clocks need not agree.
CREATE TABLE imprint_nodes (
    id         text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    renewed_at timestamptz NOT NULL DEFAULT now()
);
