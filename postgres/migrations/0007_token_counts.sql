-- 0007: each record keeps the length of its keyword document in tokens, as
-- SQLite's FTS5 counts them (keyword.TokenCount): a message's own words,
-- dates and speaker together, a trace's or memory's words. Keyword search
-- ranks by FTS5's bm25, whose document length is that count and whose
-- average length is the table's total over its records (postgres/bm25.go).
-- Records written before this migration get the count of their tsvector's
-- positions, the same but where the server's parser splits a word
-- unicode61 does not (or the reverse) or a lexeme's positions were capped.
ALTER TABLE messages ADD COLUMN ntok integer NOT NULL DEFAULT 0;
ALTER TABLE traces ADD COLUMN ntok integer NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN ntok integer NOT NULL DEFAULT 0;

UPDATE messages SET ntok = (SELECT COALESCE(SUM(cardinality(l.positions)), 0) FROM unnest(words) l)
    + (SELECT COALESCE(SUM(cardinality(l.positions)), 0) FROM unnest(who) l);
UPDATE traces SET ntok = (SELECT COALESCE(SUM(cardinality(l.positions)), 0) FROM unnest(words) l);
UPDATE memories SET ntok = (SELECT COALESCE(SUM(cardinality(l.positions)), 0) FROM unnest(words) l);
