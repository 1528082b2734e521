-- 0005: the large columns (vectors kept as float4 arrays, long texts) are
-- compressed with lz4 when the server was built with it: pglz took a tenth
-- of the server's time in an import, compressing rows above TOAST's 2 kB
-- threshold (a message with its 384-dim vector is one), and lz4 compresses
-- and reads back several times faster. Rows already stored keep pglz until
-- rewritten; a server without lz4 keeps pglz for all.
DO $$
BEGIN
    ALTER TABLE messages ALTER COLUMN vec SET COMPRESSION lz4, ALTER COLUMN content SET COMPRESSION lz4;
    ALTER TABLE memories ALTER COLUMN vec SET COMPRESSION lz4, ALTER COLUMN content SET COMPRESSION lz4;
    ALTER TABLE traces ALTER COLUMN vec_summary SET COMPRESSION lz4, ALTER COLUMN vec_action SET COMPRESSION lz4,
        ALTER COLUMN user_text SET COMPRESSION lz4, ALTER COLUMN agent_text SET COMPRESSION lz4,
        ALTER COLUMN tool_calls SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END $$;
