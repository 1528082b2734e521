-- 0016: the mark of a copy of another store into this one (imprint
-- migrate): which store it copies, how far each kind got and whether it
-- finished, as JSON (imprint.LoadMark), so that a copy cut off resumes and
-- a store is never filled from two sources. One row at most.
CREATE TABLE load_mark (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    mark TEXT NOT NULL
);
