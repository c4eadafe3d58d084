-- A project outside the indexing scope (issue 9: archived, a fork, a personal namespace, a denied group,
-- the opt-out topic...) keeps its row with status `out_of_scope` and the reason in `last_error`, so the
-- admin API says why it is not indexed; its points and manifest are gone.

ALTER TABLE projects DROP CONSTRAINT projects_status_check;
ALTER TABLE projects ADD CONSTRAINT projects_status_check
    CHECK (status IN ('pending', 'syncing', 'ok', 'failed', 'out_of_scope'));
