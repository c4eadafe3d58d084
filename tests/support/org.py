"""The fake organization of issue 14's scale tests: 200+ projects across nested groups, with archived,
empty, personal and forked ones, on the fake GitLab (`populate`)."""

from __future__ import annotations

from dataclasses import dataclass

from testkit.fake_gitlab import FakeGitLab, FakeProject
from tests.support.sources import plain_java as service

SRC = "src/main/java/com/acme/"
NAMESPACES = ("acme", "acme/platform", "acme/platform/core", "tools", "alice")


@dataclass
class Org:
    """The fake organization and what each project is."""

    projects: list[FakeProject]
    archived: set[int]
    empty: set[int]
    forks: set[int]
    personal: set[int]

    def in_group(self, prefix: str) -> list[FakeProject]:
        """The projects of group `prefix` and its subgroups."""
        return [p for p in self.projects if p.namespace == prefix or p.namespace.startswith(prefix + "/")]

    def indexable(self, projects: list[FakeProject]) -> set[int]:
        """The ids of `projects` the index keeps (not archived, empty, forked or personal)."""
        skipped = self.archived | self.empty | self.forks | self.personal
        return {p.id for p in projects} - skipped


def populate(gitlab: FakeGitLab, count: int) -> Org:
    """`count` projects over nested groups and a personal namespace; every 7th archived, 11th empty, 13th a fork."""
    org = Org(projects=[], archived=set(), empty=set(), forks=set(), personal=set())
    for i in range(count):
        namespace = NAMESPACES[i % len(NAMESPACES)]
        project = gitlab.create_project(f"{namespace}/p{i}")
        org.projects.append(project)
        if i % 11 == 5:
            org.empty.add(project.id)
        else:
            project.commit({SRC + f"P{i}.java": service(f"P{i}")}, "init")
        if i % 7 == 3:
            gitlab.set_project_attributes(project.id, archived=True)
            org.archived.add(project.id)
        if i % 13 == 4 and org.projects[0].id != project.id:
            gitlab.set_project_attributes(project.id, forked_from_id=org.projects[0].id)
            org.forks.add(project.id)
        if namespace == "alice":
            org.personal.add(project.id)
    gitlab.set_namespace_kind("alice", "user")
    return org
