-- Dependency sources at the versions in use (issue 16, part 1; docs/dependencies.md).
--
-- `project_dependencies`: what each project's build files on its default branch declare, read at a
-- sync that changed them (or a first/full sync); `unresolved` says why `version` is not concrete
-- (NULL: resolved). `dependency_files`: the build files read and their blobs, so an unchanged build
-- is not read again. `libraries`: one row per (group, artifact, version) used by a project in scope,
-- org-wide, with what became of its sources jar.

CREATE TABLE project_dependencies (
    project_id      bigint NOT NULL,
    source_path     text NOT NULL,
    group_id        text NOT NULL,
    artifact_id     text NOT NULL,
    version         text NOT NULL DEFAULT '',
    kind            text NOT NULL CHECK (kind IN ('library', 'bom')),
    scope           text NOT NULL DEFAULT '',
    unresolved      text,
    PRIMARY KEY (project_id, source_path, group_id, artifact_id, kind, scope)
);
CREATE INDEX project_dependencies_coordinates ON project_dependencies (group_id, artifact_id, version);

-- The groups a project's own artifacts are published under: a library of such a group is the org's
-- code (indexed with its project's access rules), never fetched and indexed for every reader.
CREATE TABLE project_groups (
    project_id      bigint NOT NULL,
    group_id        text NOT NULL,
    PRIMARY KEY (project_id, group_id)
);

CREATE TABLE dependency_files (
    project_id      bigint NOT NULL,
    path            text NOT NULL,
    blob_id         text NOT NULL,
    problem         text,                            -- why the file could not be read, or NULL
    PRIMARY KEY (project_id, path)
);

CREATE TABLE libraries (
    group_id        text NOT NULL,
    artifact_id     text NOT NULL,
    version         text NOT NULL,
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'indexed', 'no_sources', 'not_allowed', 'over_budget',
                                      'failed')),
    detail          text,
    source_url      text,                            -- the jar's URL, never with credentials
    jar_bytes       bigint,
    chunks          integer,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (group_id, artifact_id, version)
);

-- The head at which a project's build files were last read; NULL: never, or the last reading failed
-- (the next sync reads them whatever changed).
ALTER TABLE projects ADD COLUMN dependencies_sha text;
