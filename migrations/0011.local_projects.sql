-- Local checkouts are projects like any other (issue 27): a repository indexed by `javakb serve --watch` or
-- `javakb index` has a `projects` row, so the index status, refresh, dependencies and the admin API read it
-- through the same queries as a GitLab project (docs/decisions.md, "Local checkouts are projects").
--
-- `source` says where a project's code comes from; `local_root` is a local project's working tree. A local
-- project's id comes from `local_project_ids`, far above any GitLab id and below 2^53 (exact in JSON); its
-- `indexed_sha` and `head_sha` are working-tree states (`app.sync.local_project.tree_state`), not commits.

ALTER TABLE projects ADD COLUMN source text NOT NULL DEFAULT 'gitlab' CHECK (source IN ('gitlab', 'local'));
ALTER TABLE projects ADD COLUMN local_root text;
CREATE SEQUENCE local_project_ids START WITH 1000000000000 MINVALUE 1000000000000;
CREATE UNIQUE INDEX projects_local_path ON projects (repo_path) WHERE source = 'local';
