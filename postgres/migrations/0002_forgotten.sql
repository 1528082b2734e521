-- 0002: memories retired by hand (imprint memories forget). A forgotten
-- memory keeps its row, readable by id and in history, but is no longer
-- live: not listed, searched, recalled or deduplicated against.
ALTER TABLE memories ADD COLUMN forgotten_at timestamptz;
