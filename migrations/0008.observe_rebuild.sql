-- Issue 14, observability and model rebuilds.
--
-- `behind_since`: when a project last went from caught up to behind (a delivery, a backfill or a full
-- reindex asked for a sync the index does not cover yet); NULL while it is caught up. It is what the
-- index lag of /metrics measures. A trigger keeps it, so no query that moves the generations has to.
ALTER TABLE projects ADD COLUMN behind_since timestamptz;

CREATE FUNCTION projects_behind_since() RETURNS trigger AS $$
BEGIN
    IF NEW.requested_gen > NEW.done_gen OR NEW.full_sync THEN
        NEW.behind_since := COALESCE(NEW.behind_since, now());
    ELSE
        NEW.behind_since := NULL;
    END IF;
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER projects_behind_since BEFORE INSERT OR UPDATE ON projects
    FOR EACH ROW EXECUTE FUNCTION projects_behind_since();

-- Projects behind at upgrade time count from now.
UPDATE projects SET behind_since = now() WHERE requested_gen > done_gen OR full_sync;

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
