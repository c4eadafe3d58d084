"""A small GitLab organization with people who may read different projects, synced and served.

Five projects carry the same Java code (so every tool finds an answer in each of them) plus a
marker of their own; seven GitLab identities and two service tokens each may read a different
subset, following GitLab's rules (`tests/support/fake_gitlab_users.py`):

- `eng/backend/core`, private: alice (Developer of `eng`, inherited), dave (Reporter), gus (Guest: no code);
- `eng/docs-site`, internal: every signed-in user but the external eve;
- `oss/lib`, public: everyone;
- `eng/secret-internal`, internal with the repository for members only: alice (inherited);
- `partners/api`, private: carol (Developer of `contractors`, which `partners` is shared with as
  Reporter) and bot (a project access token's bot user, Reporter).

`root` is a GitLab administrator; the service token `oss-token` reads `oss/`, `partner-token` reads
`partners/api`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import asyncpg
from pydantic import SecretStr

from app.core.access_settings import AccessSettings, OAuthSettings
from app.core.settings import GitLabSettings, PostgresSettings, QdrantSettings, QueueSettings, Settings
from app.runtime import ServiceDeps, sync_deps
from testkit.fake_gitlab import FakeGitLab, FakeProject
from testkit.fake_gitlab_users import DEVELOPER, GUEST, REPORTER, FakeUser
from testkit.sync_env import SyncEnv, push_payload
from tests.conftest import TABLES
from tests.support.live_app import LiveApp, serve_app
from tests.support.tokens import service_token

CORE, DOCS, OSS, SECRET, PARTNERS = (
    "eng/backend/core",
    "eng/docs-site",
    "oss/lib",
    "eng/secret-internal",
    "partners/api",
)
ALL_REPOS: Final = (CORE, DOCS, OSS, SECRET, PARTNERS)
TTL_S: Final = 60.0
OSS_TOKEN: Final = "svc-oss-only"
PARTNER_TOKEN: Final = "svc-partners"
SRC: Final = "src/main/java/com/acme/shared"
SHARED_SERVICE: Final = f"{SRC}/SharedService.java"
SHARED_CONFIG: Final = "src/main/resources/application.yml"


def java_files(repo: str) -> dict[str, str]:
    """The code every project carries: a controller injecting a helper, calling it, implementing an interface."""
    marker = repo.replace("/", "-")
    return {
        f"{SRC}/Marker.java": "package com.acme.shared;\n\npublic interface Marker {\n}\n",
        f"{SRC}/Helper.java": (
            "package com.acme.shared;\n\nimport org.springframework.stereotype.Service;\n\n"
            "@Service\npublic class Helper {\n    public String help(String s) {\n        return s;\n    }\n}\n"
        ),
        SHARED_SERVICE: (
            "package com.acme.shared;\n\n"
            "import org.springframework.web.bind.annotation.GetMapping;\n"
            "import org.springframework.web.bind.annotation.RestController;\n\n"
            f"/** The shared service of {marker}. */\n"
            "@RestController\npublic class SharedService implements Marker {\n"
            "    private final Helper helper;\n\n"
            "    public SharedService(Helper helper) {\n        this.helper = helper;\n    }\n\n"
            '    @GetMapping("/shared/{id}")\n'
            "    public String handle(String id) {\n"
            f'        return helper.help("{marker}" + id);\n'
            "    }\n}\n"
        ),
        # Its configuration (issue 29): a value naming the project, and a secret no answer may show.
        SHARED_CONFIG: f"shared:\n  owner: {marker}\n  password: pw-{marker}\n",
    }


class ManualClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Org:
    """The running organization: the fake GitLab, the served app, the people and their tokens."""

    gitlab: FakeGitLab
    app: LiveApp
    clock: ManualClock
    projects: dict[str, FakeProject]
    users: dict[str, FakeUser]
    readable: dict[str, frozenset[str]]  # identity name → repo paths it may read
    deps: list[ServiceDeps]  # the server's ServiceDeps, once it started
    loops: list[asyncio.AbstractEventLoop]  # the server's event loop

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self.loops[0]

    def token(self, who: str) -> str:
        return {"oss-token": OSS_TOKEN, "partner-token": PARTNER_TOKEN}.get(who) or self.users[who].token

    def project_id(self, repo: str) -> int:
        return self.projects[repo].id


def _people(gl: FakeGitLab, projects: dict[str, FakeProject]) -> dict[str, FakeUser]:
    d = gl.directory
    users = {
        name: d.add_user(name, is_admin=name == "root", external=name == "eve", bot=name == "bot")
        for name in ("alice", "bob", "eve", "carol", "gus", "dave", "bot", "root")
    }
    d.add_group_member("eng", users["alice"], DEVELOPER)  # inherited by eng/backend and every eng project
    d.add_project_member(projects[CORE].id, users["dave"], REPORTER)
    d.add_project_member(projects[CORE].id, users["gus"], GUEST)  # Guest may not read private code
    d.add_group_member("contractors", users["carol"], DEVELOPER)
    d.share_group("partners", "contractors", REPORTER)
    d.add_project_member(projects[PARTNERS].id, users["bot"], REPORTER)  # a project access token's bot user
    return users


READABLE: Final[dict[str, frozenset[str]]] = {
    "alice": frozenset({CORE, DOCS, OSS, SECRET}),
    "bob": frozenset({DOCS, OSS}),
    "eve": frozenset({OSS}),
    "carol": frozenset({PARTNERS, DOCS, OSS}),
    "gus": frozenset({DOCS, OSS}),
    "dave": frozenset({CORE, DOCS, OSS}),
    "bot": frozenset({PARTNERS, DOCS, OSS}),
    "root": frozenset(ALL_REPOS),
    "oss-token": frozenset({OSS}),
    "partner-token": frozenset({PARTNERS}),
}


def org_settings(gl: FakeGitLab, pg_dsn: str, redis_url: str) -> Settings:
    return Settings(
        postgres=PostgresSettings(dsn=SecretStr(pg_dsn)),
        redis=QueueSettings(url=redis_url, queue=f"javakb:test-access:{uuid.uuid4().hex[:8]}"),
        qdrant=QdrantSettings(path=":memory:"),
        gitlab=GitLabSettings(url=gl.url, token=SecretStr(gl.token), webhook_secret=SecretStr("x")),
        service_tokens=[service_token(OSS_TOKEN, ["oss/"], "oss"), service_token(PARTNER_TOKEN, [PARTNERS], "p")],
        access=AccessSettings(ttl_s=TTL_S, rate_burst=100_000),
    )


@contextmanager
def serve_org(
    tmp_path: Path, pg_dsn: str, redis_url: str, *, oauth: Callable[[FakeGitLab, str], OAuthSettings] | None = None
) -> Iterator[Org]:
    """Create the projects and people, sync every project, then serve the app; torn down on exit."""
    with FakeGitLab(tmp_path) as gl:
        projects = {repo: gl.create_project(repo) for repo in ALL_REPOS}
        heads = {repo: project.commit(java_files(repo), "initial") for repo, project in projects.items()}
        access = {CORE: ("private", "enabled"), DOCS: ("internal", "enabled"), OSS: ("public", "enabled")}
        access |= {SECRET: ("internal", "private"), PARTNERS: ("private", "enabled")}
        for repo, (visibility, repository) in access.items():
            gl.set_project_attributes(projects[repo].id, visibility=visibility, repository_access_level=repository)
        users = _people(gl, projects)
        settings = org_settings(gl, pg_dsn, redis_url)
        started: list[ServiceDeps] = []
        loops: list[asyncio.AbstractEventLoop] = []

        async def prepare(deps: ServiceDeps) -> None:
            conn = await asyncpg.connect(pg_dsn)  # a fresh org: no project state left by another module
            try:
                await conn.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY")
            finally:
                await conn.close()
            env = SyncEnv(deps=sync_deps(deps), settings=settings, gitlab=gl)
            for repo, project in projects.items():
                await env.deliver(push_payload(project, heads[repo]))
            await env.work()
            for repo, (visibility, repository) in access.items():
                await deps.db.set_project_access(projects[repo].id, visibility, repository)
            started.append(deps)
            loops.append(asyncio.get_running_loop())

        clock = ManualClock()

        def configure(base_url: str) -> Settings:
            return settings if oauth is None else settings.model_copy(update={"oauth": oauth(gl, base_url)})

        with serve_app(configure, prepare=prepare, clock=clock) as app:
            yield Org(
                gitlab=gl,
                app=app,
                clock=clock,
                projects=projects,
                users=users,
                readable=dict(READABLE),
                deps=started,
                loops=loops,
            )
