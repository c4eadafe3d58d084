-- The reconcile sweep asks GitLab for default-branch heads (docs/decisions.md, "GitLab sync"):
-- `head_checked_at` is when this service last saw the project's head (a sync or a sweep's check),
-- on PostgreSQL's clock; `sweeps` keeps when the last sweep listed GitLab's projects.

ALTER TABLE projects ADD COLUMN head_checked_at timestamptz;

CREATE TABLE sweeps (
    name       text PRIMARY KEY,
    listed_at  timestamptz NOT NULL,   -- start of the last sweep that listed projects
    full_at    timestamptz NOT NULL    -- start of the last sweep that listed every project
);
