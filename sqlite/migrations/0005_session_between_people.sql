-- 0005: a session can be a conversation between two people (LoCoMo, any
-- import where both sides are people), marked when its messages are
-- recorded; extraction then reads both sides and names each speaker.

ALTER TABLE sessions ADD COLUMN between_people INTEGER NOT NULL DEFAULT 0;
