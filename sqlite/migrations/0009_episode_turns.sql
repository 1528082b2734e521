-- 0009: the turns of open episodes as rows of their own. A live session
-- appends a few turns at a time to its open episode; with the turns as one
-- JSON column, every append rewrote all of them (at 2,000 turns, half a
-- megabyte for one new turn). A row per turn makes an append write its new
-- turns and a few index pages only. An episode's turns are its turns
-- column followed by its rows in seq order; closing the episode folds the
-- rows back into the column, so closed episodes read as before.
CREATE TABLE episode_turns (
    rid        INTEGER PRIMARY KEY,
    episode_id TEXT NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    turn_id    TEXT,
    turn       TEXT NOT NULL,
    UNIQUE (episode_id, seq)
);
-- A turn id the episode already holds is skipped: found by this index.
CREATE INDEX episode_turns_id ON episode_turns (episode_id, turn_id) WHERE turn_id IS NOT NULL;

-- The open episodes of a running service carry their turns over.
INSERT INTO episode_turns (episode_id, seq, turn_id, turn)
    SELECT e.id, CAST(j.key AS INTEGER), NULLIF(json_extract(j.value, '$.id'), ''), json(j.value)
    FROM episodes e, json_each(e.turns) j
    WHERE e.status = 'open' AND json_valid(e.turns)
    ORDER BY e.id, CAST(j.key AS INTEGER);
UPDATE episodes SET turns = '[]' WHERE status = 'open' AND json_valid(turns);
