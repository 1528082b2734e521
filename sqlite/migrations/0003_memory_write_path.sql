-- One-memory write transactions are the extraction's hot path: every index
-- on memories is one more page written to the WAL per memory. The embedder
-- index only served loading the vector index, which reads every row with a
-- vector anyway, so a table scan costs the same there.
DROP INDEX IF EXISTS memories_embedder;
