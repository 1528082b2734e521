-- Messages are indexed with the absolute dates they are about (their own
-- date and the dates their relative time phrases name) in a column of
-- their own, so a match in the message itself ranks above a match in its
-- dates (the weights are in sqlite/messagedoc.go), and with their speaker,
-- a column queried only alone (a query naming no word of any message but a
-- speaker). The speaker's share of a hit's score and the turn a message
-- answers are scored at query time (sqlite/search.go, messageContext). The
-- old index is rebuilt from the messages by the Go step of this migration
-- (reindexMessages).
DROP TABLE IF EXISTS message_words;
CREATE VIRTUAL TABLE message_words USING fts5 (text, date, who,
    tokenize = 'porter unicode61', content = '', contentless_delete = 1);
