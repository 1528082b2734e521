-- 0004: the mark of a copy of another store into this one (imprint
-- migrate): which store it copies, how far each kind got and whether it
-- finished, as JSON (imprint.LoadMark), so that a copy cut off resumes and
-- a database is never filled from two sources. One row at most.
CREATE TABLE load_mark (
    id   integer PRIMARY KEY CHECK (id = 1),
    mark text NOT NULL
);
