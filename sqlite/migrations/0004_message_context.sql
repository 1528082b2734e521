-- Messages are indexed with their context, in columns of their own so a
-- match in the message itself ranks above a match in its context (the
-- weights are in sqlite/messagedoc.go): who said it (the speaker's name),
-- the absolute dates it is about (its own date and the dates its relative
-- time phrases name), and the turn it answers (the previous message of the
-- session). The old index is rebuilt from the messages by the Go step of
-- this migration (reindexMessages).
DROP TABLE IF EXISTS message_words;
CREATE VIRTUAL TABLE message_words USING fts5 (text, who, date, context,
    tokenize = 'porter unicode61', content = '', contentless_delete = 1);
