-- Admin backfills and what each did per project (`POST /admin/reindex`, `GET /admin/backfills/{id}`):
-- one unknown or unreadable project is recorded as such instead of failing the whole backfill.

CREATE TABLE backfills (
    id              bigserial PRIMARY KEY,
    project_ids     bigint[],                        -- NULL: every project GitLab lists
    full_sync       boolean NOT NULL DEFAULT false,
    status          text NOT NULL DEFAULT 'queued'
                    CHECK (status IN ('queued', 'running', 'done', 'failed')),
    error           text,                            -- why the backfill as a whole failed
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz
);

CREATE TABLE backfill_projects (
    backfill_id     bigint NOT NULL REFERENCES backfills (id) ON DELETE CASCADE,
    project_id      bigint NOT NULL,
    outcome         text NOT NULL CHECK (outcome IN ('requested', 'not_found', 'forbidden', 'failed', 'out_of_scope')),
    detail          text,
    PRIMARY KEY (backfill_id, project_id)
);
