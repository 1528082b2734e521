-- 0017: a trace's row (its two vectors, 3 kB at 384 dimensions, and its
-- texts) stays in the table's own page up to 8160 bytes instead of being
-- cut at TOAST's 2 kB default: below that, the vectors were tried for
-- compression, which float arrays do not take, and moved to the TOAST
-- table, a second heap and index write for each trace stored and a second
-- read for each one recalled. Rows already stored keep their TOAST values
-- until rewritten.
ALTER TABLE traces SET (toast_tuple_target = 8160);
