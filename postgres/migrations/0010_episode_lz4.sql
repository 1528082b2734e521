-- 0010: an episode's turns (its whole transcript as JSON) and meta are
-- compressed with lz4 when the server was built with it, as 0005 did for
-- the other large columns: pglz compressing the turns of a captured episode
-- took a third of its insert's time in an import. Rows already stored keep
-- pglz until rewritten; a server without lz4 keeps pglz.
DO $$
BEGIN
    ALTER TABLE episodes ALTER COLUMN turns SET COMPRESSION lz4, ALTER COLUMN meta SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END $$;
