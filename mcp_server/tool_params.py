"""The parameters the search tools share, each with the description the model reads."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from app.search.scoping import SearchScope
from mcp_server.render import (
    SET_CODE_FIRST,
)

Budget = Annotated[int, Field(ge=500, le=100_000, description="Output budget in characters; whole results are cut.")]


Repo = Annotated[str | None, Field(description="Repository path (group/project), or a group prefix ending in '/'.")]


PathPrefix = Annotated[
    str | None,
    Field(description="Only results under this folder or file of the repository, e.g. a Maven module: 'mall-admin'."),
]


Offset = Annotated[int, Field(ge=0, description="Skip this many results: the next_offset of a previous answer.")]


Code = Annotated[bool, Field(description=f"Show every member's code, not only the first {SET_CODE_FIRST} members'.")]


MethodName = Annotated[str, Field(description="Method as Type.method, qualified, or a bare method name.")]


TypeName = Annotated[str, Field(description="A type's simple or qualified name.")]


ScopeArg = Annotated[
    SearchScope,
    Field(description="code: the organization's code (default); libraries: indexed dependency sources; all: both."),
]


CALLER = (
    "Instead of path: a client call site (a method calling over RestTemplate, RestClient or WebClient, "
    "a Feign or @HttpExchange method, or a method calling one): the handlers its calls reach."
)
