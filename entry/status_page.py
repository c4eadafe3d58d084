"""The operator's page: `GET /admin` (and `/`, which leads there), `/admin/sign-in`, `/admin/sign-out`.

Read-only, for an admin: a request with an admin token (`Authorization: Bearer`, as the admin API)
or with a session cookie a sign-in opened (`app.console.session`). Anyone else is sent to the
sign-in form (303) and sees nothing else. The page is `app.console.html.render_status` of
`app.console.model.read_status`; every answer carries the strict headers of `app.console.html.HEADERS`.
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from app.auth.identity import match_token
from app.console.html import HEADERS, SIGN_IN_PATH, SIGN_OUT_PATH, render_sign_in, render_status
from app.console.model import read_status
from app.console.session import COOKIE, SESSION_TTL_S, close_session, open_session, session_admin
from app.core.bodies import BodyTooLargeError, read_body
from app.core.errors import QueueUnavailableError
from app.runtime import ServiceDeps
from entry.admin import admin_ok

logger = logging.getLogger(__name__)

PAGE_PATH = "/admin"
SIGN_IN_MAX_BYTES = 4096


def status_routes() -> list[Route]:
    """The page's routes (mounted before MCP's catch-all `/`)."""
    return [
        Route("/", lambda request: _see_other(PAGE_PATH), methods=["GET"]),
        Route(PAGE_PATH, status_page, methods=["GET"]),
        Route(SIGN_IN_PATH, sign_in_form, methods=["GET"]),
        Route(SIGN_IN_PATH, sign_in, methods=["POST"]),
        Route(SIGN_OUT_PATH, sign_out, methods=["POST"]),
    ]


async def status_page(request: Request) -> Response:
    """The page for an admin; the sign-in form's address for anyone else."""
    if not await is_admin(request):
        return _see_other(SIGN_IN_PATH)
    deps: ServiceDeps = request.state.deps
    return HTMLResponse(render_status(await read_status(deps)), headers=HEADERS)


async def is_admin(request: Request) -> bool:
    """An admin token in `Authorization`, or the cookie of a live session (Redis down: no session holds)."""
    if admin_ok(request):
        return True
    deps: ServiceDeps = request.state.deps
    try:
        found = await session_admin(
            deps.queue, deps.settings.redis.queue, request.cookies.get(COOKIE), deps.settings.admin_tokens
        )
    except QueueUnavailableError as exc:
        logger.warning("admin page: cannot read sessions: %s", exc)
        return False
    return found is not None


async def sign_in_form(request: Request) -> Response:
    """The form (the page itself for who is signed in already)."""
    if await is_admin(request):
        return _see_other(PAGE_PATH)
    return HTMLResponse(render_sign_in(), headers=HEADERS)


async def sign_in(request: Request) -> Response:
    """A form post of `token`: an admin token opens a session (cookie) and leads to the page; else 401."""
    deps: ServiceDeps = request.state.deps
    try:
        form = parse_qs((await read_body(request, SIGN_IN_MAX_BYTES)).decode("utf-8", errors="replace"))
    except BodyTooLargeError:
        return HTMLResponse(render_sign_in("That is not an admin token."), status_code=401, headers=HEADERS)
    token = (form.get("token") or [""])[0].strip()
    admin = match_token(token, deps.settings.admin_tokens) if token else None
    if admin is None:
        logger.info("admin page: a sign-in with no admin token was refused")
        return HTMLResponse(render_sign_in("That is not an admin token."), status_code=401, headers=HEADERS)
    try:
        session_id = await open_session(deps.queue, deps.settings.redis.queue, admin)
    except QueueUnavailableError as exc:
        logger.warning("admin page: cannot open a session: %s", exc)
        message = "Sessions are kept in Redis, which cannot be reached: try again, or send the token as a bearer."
        return HTMLResponse(render_sign_in(message), status_code=503, headers=HEADERS)
    logger.info("admin page: %s signed in", admin.name)
    response = _see_other(PAGE_PATH)
    response.set_cookie(
        COOKIE,
        session_id,
        max_age=SESSION_TTL_S,
        path=PAGE_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


async def sign_out(request: Request) -> Response:
    """End the session (cookie and key) and show the form again."""
    deps: ServiceDeps = request.state.deps
    try:
        await close_session(deps.queue, deps.settings.redis.queue, request.cookies.get(COOKIE))
    except QueueUnavailableError as exc:  # the key expires on its own; the cookie goes anyway
        logger.warning("admin page: cannot close a session: %s", exc)
    response = _see_other(SIGN_IN_PATH)
    response.delete_cookie(COOKIE, path=PAGE_PATH, httponly=True, samesite="strict")
    return response


def _see_other(path: str) -> Response:
    return RedirectResponse(path, status_code=303, headers=HEADERS)
