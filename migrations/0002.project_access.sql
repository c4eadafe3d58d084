-- Who may read a project's code: its visibility and repository access level as GitLab reports them
-- (`GET /projects/:id`). NULL until the sync or a `project_update` has asked GitLab: unknown counts as
-- private, so a project is readable only by its members (Reporter or higher) until then.

ALTER TABLE projects
    ADD COLUMN visibility        text CHECK (visibility IN ('private', 'internal', 'public')),
    ADD COLUMN repository_access text CHECK (repository_access IN ('enabled', 'private', 'disabled'));
