-- Status an agent can trust, and the triggers that need no system hook (issue 14; docs/decisions.md,
-- "Index status: what GitLab reported, and since when the index lags it").
--
-- `head_sha` is the default-branch head GitLab's API last reported (at `head_checked_at`, 0005): a sync
-- or a sweep's check writes it, a delivery never does (a hook's `after` is `target_sha`). `behind_since`
-- is when the index was first known to lag what GitLab has (a delivery, a sweep's check, a request),
-- cleared when a sync covers every request; `lag_commits` the commits from `indexed_sha` to `head_sha`
-- when a compare counted them (0 once caught up, NULL when not counted).

ALTER TABLE projects ADD COLUMN head_sha text;
ALTER TABLE projects ADD COLUMN behind_since timestamptz;
ALTER TABLE projects ADD COLUMN lag_commits integer;
-- Projects behind at upgrade time count from now.
UPDATE projects SET behind_since = now() WHERE requested_gen > done_gen OR full_sync;

-- On-demand sync requests: `POST /api/v1/index-jobs` (a CI job token or an index-job token) and the
-- MCP tool `refresh_repo`. One row per (project, commit) asked by CI (a retried CI job gets the same
-- id back); `generation` is the project's requested generation the request was given, so its state is
-- read from `projects` (done once `done_gen` reaches it).
CREATE TABLE index_requests (
    id              bigserial PRIMARY KEY,
    project_id      bigint NOT NULL,
    commit_sha      text,                            -- NULL for a refresh (the head, whatever it is)
    source          text NOT NULL CHECK (source IN ('ci_job', 'index_token', 'refresh')),
    requested_by    text NOT NULL,                   -- `ci_job:<id>`, `index_token:<name>`, an Access subject
    generation      bigint,                          -- NULL: not requested (out of the indexing scope)
    detail          text,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX index_requests_commit ON index_requests (project_id, commit_sha) WHERE commit_sha IS NOT NULL;
