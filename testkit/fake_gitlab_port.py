"""What the endpoints and the HTTP server read and change of the fake GitLab (`FakeGitLab` is one).

The API (`fake_gitlab_api.py`) and the server (`fake_gitlab_http.py`) take this instead of importing
`fake_gitlab.py`, which builds them: the fake's modules stay layers with no circle of imports.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from testkit.fake_gitlab_jobs import CiJobs
from testkit.fake_gitlab_model import Fault, Namespace, ProjectSnapshot
from testkit.fake_gitlab_users import Directory


class GitLabState(Protocol):
    """The fake's settings, accounting and data, as its request side sees them."""

    token: str
    lock: threading.Lock
    bytes_sent: int
    server_errors: list[str]
    max_diff_files: int
    safe_max_diff_files: int
    max_patch_bytes: int
    directory: Directory
    latency_s: float
    token_scopes: list[str]
    system_hooks: list[dict[str, Any]]
    system_hook_tokens: dict[int, str]
    ci_jobs: CiJobs

    @property
    def url(self) -> str: ...

    def record_call(self, method: str, path: str) -> Fault | None: ...

    def snapshot(self, id_or_path: str) -> ProjectSnapshot | None: ...

    def snapshots(self) -> list[ProjectSnapshot]: ...

    def group(self, id_or_path: str) -> Namespace | None: ...

    def archive_throttled(self, project_id: int) -> bool: ...
