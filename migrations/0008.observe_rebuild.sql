-- Issue 14, observability and model rebuilds.
--
-- A model rebuild in service mode (`POST /admin/rebuild`): a new generation filled from every
-- project's manifest while the alias keeps serving the old one, then the switch.
CREATE TABLE rebuilds (
    id              bigserial PRIMARY KEY,
    status          text NOT NULL DEFAULT 'queued'
                    CHECK (status IN ('queued', 'building', 'switching', 'done', 'failed')),
    collection      text,                            -- the new generation, once created
    previous        text,                            -- the generation the alias pointed at before the switch
    embedding_model text,
    dimension       integer,
    error           text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    started_at      timestamptz,
    finished_at     timestamptz
);
-- At most one rebuild at a time: two would write two new generations.
CREATE UNIQUE INDEX rebuilds_one_active ON rebuilds ((true)) WHERE status IN ('queued', 'building', 'switching');

CREATE TABLE rebuild_projects (
    rebuild_id      bigint NOT NULL REFERENCES rebuilds (id) ON DELETE CASCADE,
    project_id      bigint NOT NULL,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'skipped', 'failed')),
    files           integer NOT NULL DEFAULT 0,
    chunks          integer NOT NULL DEFAULT 0,
    detail          text,
    finished_at     timestamptz,
    PRIMARY KEY (rebuild_id, project_id)
);
