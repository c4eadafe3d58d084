-- Issue 14 audit: arq job ids of backfills and rebuilds that no database recreation can repeat.
--
-- Their job ids were derived from these rows' ids alone (`backfill:<id>:step:<n>`), and arq keeps
-- those jobs' results an hour: after PostgreSQL is recreated or restored while Redis is kept, the
-- ids handed out again met the kept results and arq refused the new jobs as done. Each row now
-- carries a random token drawn when it is created, and its job ids carry it (app/sync/queue.py);
-- within one backfill or rebuild the ids stay fixed, so a retried step still enqueues its successor once.
ALTER TABLE backfills ADD COLUMN job_token text NOT NULL DEFAULT left(md5(gen_random_uuid()::text), 12);
ALTER TABLE rebuilds ADD COLUMN job_token text NOT NULL DEFAULT left(md5(gen_random_uuid()::text), 12);
