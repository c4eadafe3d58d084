"""Stand-ins for our own objects, injected where they are used instead of patched onto them.

`around(part, name=wrapper)` is `part` with some methods wrapped (a test counts calls, a benchmark times
them) and every other attribute read through to `part`. It is passed in where the part is built: to
`entry.deps.open_deps(wrap=...)`, or to a constructor (`SearchService(around(store, ...), ...)`).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

Method = Callable[..., Any]
Around = Callable[[Method], Method]  # the original bound method -> what to call instead
_Part = TypeVar("_Part")


class _Wrapped:
    """`part` with the methods named in `wrappers` replaced by their wrappers around the originals.

    Like an override in a subclass, the part's own methods run with the stand-in as `self`: a call one
    method makes to another wrapped one goes through its wrapper too. Attributes are read from and
    written to the part.
    """

    def __init__(self, part: object, wrappers: Mapping[str, Around]) -> None:
        object.__setattr__(self, "_part", part)
        object.__setattr__(self, "_methods", {})
        self._methods.update({name: wrapper(self._own(name)) for name, wrapper in wrappers.items()})

    def _own(self, name: str) -> Any:
        function = inspect.getattr_static(type(self._part), name, None)
        if isinstance(function, types.FunctionType):
            return types.MethodType(function, self)
        return getattr(self._part, name)

    def __getattr__(self, name: str) -> Any:
        method = self._methods.get(name)
        return method if method is not None else self._own(name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._part, name, value)


def around(part: _Part, **wrappers: Around) -> _Part:
    """`part` as seen through `wrappers` (method name -> wrapper of the original method)."""
    missing = [name for name in wrappers if not callable(getattr(part, name, None))]
    if missing:
        raise AttributeError(f"{type(part).__name__} has no method {', '.join(missing)}")
    return cast(_Part, _Wrapped(part, wrappers))


class ByRole:
    """An `open_deps(wrap=...)` that wraps methods of the parts with these roles (role -> name -> wrapper)."""

    def __init__(self, wrappers: Mapping[str, Mapping[str, Around]]) -> None:
        self._wrappers = wrappers

    def __call__(self, role: str, part: _Part, /) -> _Part:
        """`part`, wrapped when its role has wrappers."""
        chosen = self._wrappers.get(role)
        return around(part, **chosen) if chosen else part
