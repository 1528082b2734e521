-- imprint no longer keeps an index of its own on River's river_job table:
-- the River engine finds a unique key's unfinished job through River's
-- unique jobs and lists jobs through River's client, so the index the
-- engine used to create (by json_extract of the args' unique_key) is
-- dropped. River's own tables and indexes are River's migrations' alone.
DROP INDEX IF EXISTS imprint_river_job_unfinished_key;
