"""Issue 24's OAuth registration flood against the served app: with the default limits, and with them lifted.

Each mode starts `create_app` under uvicorn in a subprocess (OAuth on, a scratch database, the
embedded Qdrant in memory), then from one client address sends `--big` registrations whose
`client_name` is `--big-bytes` long, one of 20 MB, and `--small` ordinary registrations, and reports
the answers by status, the time taken and the server's RSS growth (VmRSS before and after). The
`lifted` mode sets every `JAVAKB_OAUTH__*` bound out of reach: the baseline of what the proxy did
without them (main before issue 24), measured in the same run.

    .venv/bin/python -m bench.oauth_flood [--big 150] [--big-bytes 1048576] [--small 3000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Final

import httpx

from bench.common import HOST, bench_database, free_port, kb_to_mb, log, redis_url, write_json

REDIS_DB: Final = 13
READY_TIMEOUT_S: Final = 60.0
HUGE: Final = 10**9
LIFTED: Final[dict[str, float]] = {
    "max_clients": HUGE, "max_registrations_per_address": HUGE, "max_body_bytes": 64 * 1024 * 1024,
    "max_field_chars": 32 * 1024 * 1024, "rate_per_s": float(HUGE), "rate_burst": HUGE,
}  # fmt: skip


def serve(mode: str, port: int, dsn: str, redis: str) -> None:
    """The server process: the app with OAuth on, the mode's limits."""
    import uvicorn
    from pydantic import SecretStr

    from app.core import settings as cfg
    from app.core.access_settings import OAuthSettings
    from entry.web import create_app

    oauth = OAuthSettings(
        client_id="bench-app",
        client_secret=SecretStr(secrets.token_hex(16)),
        public_url=f"http://{HOST}:{port}",
        jwt_signing_key=SecretStr(secrets.token_hex(32)),
    )
    if mode == "lifted":
        oauth = OAuthSettings.model_validate(oauth.model_dump() | LIFTED)
    settings = cfg.Settings(
        postgres=cfg.PostgresSettings(dsn=SecretStr(dsn)),
        redis=cfg.QueueSettings(url=redis, queue="javakb:bench-oauth"),
        qdrant=cfg.QdrantSettings(path=":memory:"),
        gitlab=cfg.GitLabSettings(url="http://127.0.0.1:1"),
        oauth=oauth,
    )
    uvicorn.run(create_app(settings), host=HOST, port=port, log_level="warning", log_config=None)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return kb_to_mb(int(line.split()[1])) or 0.0
    return 0.0


def register(http: httpx.Client, name: str) -> int:
    body = {"redirect_uris": ["http://127.0.0.1:9/cb"], "token_endpoint_auth_method": "none", "client_name": name}
    return http.post("/register", json=body).status_code


def flood(mode: str, args: argparse.Namespace, dsn: str) -> dict[str, Any]:
    port = free_port()
    command = [sys.executable, "-m", "bench.oauth_flood", "--serve", mode, "--port", str(port), "--dsn", dsn]
    root = Path(__file__).resolve().parent.parent
    server = subprocess.Popen(command, cwd=root, env=dict(os.environ), stdout=subprocess.DEVNULL)
    try:
        with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=120) as http:
            _wait_ready(http, server)
            before = rss_mb(server.pid)
            started = time.perf_counter()
            big = Counter(register(http, "n" * args.big_bytes) for _ in range(args.big))
            huge = register(http, "n" * 20 * 1024 * 1024)
            big_s = time.perf_counter() - started
            small = Counter(register(http, f"agent {i}") for i in range(args.small))
            small_s = time.perf_counter() - started - big_s
            after = rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {
        "mode": mode,
        "big": dict(big), "huge_20mb": huge, "big_s": round(big_s, 1),
        "small": dict(small), "small_s": round(small_s, 1),
        "rss_before_mb": round(before, 1), "rss_after_mb": round(after, 1), "rss_growth_mb": round(after - before, 1),
    }  # fmt: skip


def _wait_ready(http: httpx.Client, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}")
        try:
            if http.get("/.well-known/oauth-authorization-server").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise TimeoutError("the server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, default=150)
    parser.add_argument("--big-bytes", type=int, default=1024 * 1024)
    parser.add_argument("--small", type=int, default=3000)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--serve", choices=["default", "lifted"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--dsn", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port, args.dsn, redis_url(REDIS_DB))
        return
    results = []
    for mode in ("lifted", "default"):
        with bench_database() as dsn:
            log(f"{mode}: flooding")
            results.append(flood(mode, args, dsn))
            print(json.dumps(results[-1]))
    if args.json:
        write_json(args.json, {"runs": results})


if __name__ == "__main__":
    main()
