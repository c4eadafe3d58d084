-- Backfills at scale (issue 14): what was asked for (a project, a group, all), re-embedding on demand,
-- and per project the sync generation the backfill requested, so its progress (queued, running, done,
-- failed) is derived from the project's own state instead of being written twice.

ALTER TABLE backfills ADD COLUMN target jsonb NOT NULL DEFAULT '{}';  -- the request's target, as sent
ALTER TABLE backfills ADD COLUMN force_embed boolean NOT NULL DEFAULT false;
ALTER TABLE backfills ADD COLUMN started_at timestamptz;               -- when its projects were resolved
ALTER TABLE backfills ADD COLUMN step bigint NOT NULL DEFAULT 0;       -- the last dispatcher step that ran

ALTER TABLE backfill_projects DROP CONSTRAINT backfill_projects_outcome_check;
ALTER TABLE backfill_projects ADD CONSTRAINT backfill_projects_outcome_check
    CHECK (outcome IN ('requested', 'not_found', 'forbidden', 'failed', 'out_of_scope', 'empty', 'waiting'));
ALTER TABLE backfill_projects ADD COLUMN repo_path text;
ALTER TABLE backfill_projects ADD COLUMN gen bigint;                    -- the generation its sync covers
ALTER TABLE backfill_projects ADD COLUMN requested_at timestamptz;      -- runs since then are the backfill's
CREATE INDEX backfill_projects_waiting ON backfill_projects (backfill_id, project_id) WHERE outcome = 'waiting';

-- The next sync of the project embeds every chunk again, unchanged ones too (`"force": true`).
ALTER TABLE projects ADD COLUMN force_embed boolean NOT NULL DEFAULT false;
CREATE INDEX index_jobs_status ON index_jobs (status, id);  -- GET /admin/jobs?status=
