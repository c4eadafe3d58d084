-- Sync state: one row per GitLab project, the runs of the sync job, every webhook delivery,
-- and the manifest of indexed files (blob ids) that a tree walk diffs against.

CREATE TABLE projects (
    id              bigint PRIMARY KEY,              -- the GitLab project id
    repo_path       text NOT NULL,                   -- path_with_namespace
    default_branch  text,
    indexed_sha     text,                            -- the commit the index equals
    target_sha      text,                            -- the newest head a delivery announced
    requested_gen   bigint NOT NULL DEFAULT 0,       -- bumped by every delivery that asks for a sync
    done_gen        bigint NOT NULL DEFAULT 0,       -- the generation the last successful sync covered
    full_sync       boolean NOT NULL DEFAULT false,  -- next run walks the tree instead of comparing
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'syncing', 'ok', 'failed')),
    last_error      text,
    indexed_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_repo_path ON projects (repo_path);

CREATE TABLE index_jobs (
    id              bigserial PRIMARY KEY,
    project_id      bigint NOT NULL,
    trigger         text NOT NULL,
    from_sha        text,
    to_sha          text,
    mode            text,                            -- compare | tree | noop
    status          text NOT NULL CHECK (status IN ('PENDING', 'RUNNING', 'DONE', 'FAILED')),
    files_changed   integer NOT NULL DEFAULT 0,
    files_parsed    integer NOT NULL DEFAULT 0,
    files_skipped   integer NOT NULL DEFAULT 0,
    files_deleted   integer NOT NULL DEFAULT 0,
    chunks_embedded integer NOT NULL DEFAULT 0,
    chunks_reused   integer NOT NULL DEFAULT 0,
    chunks_deleted  integer NOT NULL DEFAULT 0,
    error           text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    started_at      timestamptz,
    finished_at     timestamptz
);
CREATE INDEX index_jobs_project ON index_jobs (project_id, id DESC);

CREATE TABLE deliveries (
    idempotency_key text PRIMARY KEY,
    event           text NOT NULL,
    project_id      bigint,
    ref             text,
    after_sha       text,
    outcome         text NOT NULL,
    detail          text,
    received_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deliveries_received ON deliveries (received_at);

CREATE TABLE file_manifest (
    project_id      bigint NOT NULL,
    path            text NOT NULL,
    blob_sha        text NOT NULL,
    chunk_ids       text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (project_id, path)
);
