-- 0009: the keyword index stems with Porter's original algorithm, as
-- SQLite's FTS5 porter tokenizer does, instead of Snowball's English
-- (Porter2), which stems about 3% of the words of the shipped test data
-- otherwise ("fly" and "flies", "hope" and "hopeful", "friend" and
-- "friendly" are one word to one and two to the other), so that a query
-- finds the same records on both stores. A database that already holds
-- records keeps the English stemmer: its tsvectors were made with it, and
-- its queries must be stemmed alike. Every database `imprint migrate`
-- writes to starts empty. The tables are locked against writes for the
-- check, so that it sees every record a node already running (of an older
-- version) is writing; nodes of one deployment should run one version.
DO $$
BEGIN
    LOCK TABLE messages, traces, memories IN SHARE MODE;
    IF NOT EXISTS (SELECT 1 FROM messages) AND NOT EXISTS (SELECT 1 FROM traces)
        AND NOT EXISTS (SELECT 1 FROM memories) THEN
        ALTER TEXT SEARCH DICTIONARY imprint_stem (Language = porter);
    END IF;
END $$;
