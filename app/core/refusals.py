"""A request refused with an HTTP error, raised below an endpoint and answered once at the Starlette boundary.

The helpers that read a request (its credentials, its query parameters, a page) return what they read
or raise `RefusedError`; the web app's one handler (`answer_refused`, registered by `entry.web`) writes
it as the `{"error": message}` body every refusal of the REST, admin and index-job APIs has, with its
status and headers. So an endpoint reads `page = admin_page(request)`, never a value-or-response.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.core.errors import ServiceError


class RefusedError(ServiceError):
    """A request refused: answered `{"error": message}` with `status` and `headers` (`answer_refused`)."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


def refusal(refused: RefusedError) -> JSONResponse:
    """The response of a refusal."""
    return JSONResponse({"error": refused.message}, status_code=refused.status, headers=refused.headers or None)


def unauthorized_error() -> RefusedError:
    """401 with the challenge RFC 6750 asks for (a job token, where accepted, is the other credential)."""
    return RefusedError(401, "unauthorized", {"WWW-Authenticate": "Bearer"})


async def answer_refused(request: Request, exc: Exception) -> Response:
    """The web app's handler of `RefusedError` (Starlette passes every exception as `Exception`)."""
    if not isinstance(exc, RefusedError):
        raise exc
    return refusal(exc)
