"""The answer to a request without valid credentials, shared by REST search and the admin API."""

from __future__ import annotations

from starlette.responses import JSONResponse


def unauthorized() -> JSONResponse:
    """401 with the challenge RFC 6750 asks for."""
    return JSONResponse({"error": "unauthorized"}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
