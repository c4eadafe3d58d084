"""Validation errors that name a secret field but never show its value.

pydantic quotes the input of every failed field (`input_value='whsec_…'`): a malformed signing key
would be printed in clear by whatever shows the error (a traceback at start, a log line).
`hide_secret_inputs` wraps the validation of a settings model: it re-raises the same errors with
the input of any location that holds a `SecretStr` (found by type, as `secret_values` finds them)
replaced by `HIDDEN`. The field's name, the error's kind and its message stay.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, SecretStr, ValidationError, ValidatorFunctionWrapHandler
from pydantic_core import InitErrorDetails, PydanticCustomError

HIDDEN = "**********"


def hide_secret_inputs(cls: type[BaseModel], data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A `model_validator(mode="wrap")`: validate, and re-raise errors with secret inputs hidden.

    Raises:
        ValidationError: the errors of `data`, each secret's input replaced by `HIDDEN`.
    """
    try:
        return handler(data)
    except ValidationError as exc:
        raise masked(exc, cls) from None


def masked(exc: ValidationError, model: type[BaseModel]) -> ValidationError:
    """`exc` with the input of every location holding a secret (or that cannot be resolved) hidden."""
    details = [_detail(error, _hide(model, error)) for error in exc.errors()]
    return ValidationError.from_exception_data(exc.title, details)


def _hide(model: type[BaseModel], error: Any) -> bool:
    loc = tuple(error["loc"])
    if holds_secret(model, loc):
        return True
    # A missing or unexpected field's input is the object around it, which may hold a secret.
    scalar = error["input"] is None or isinstance(error["input"], str | int | float | bool)
    return not scalar and holds_secret(model, loc[:-1])


def _detail(error: Any, hide: bool) -> InitErrorDetails:
    value = HIDDEN if hide else error["input"]
    message = str(error["msg"]).replace("{", "{{").replace("}", "}}")
    kind = PydanticCustomError(str(error["type"]), message)  # the message as pydantic wrote it, no input
    return InitErrorDetails(type=kind, loc=tuple(error["loc"]), input=value)


def holds_secret(model: type[BaseModel], loc: tuple[int | str, ...]) -> bool:
    """Whether the value at `loc` in `model` is, or contains, a `SecretStr`; True when `loc` is unknown."""
    annotation: Any = model
    for part in loc:
        if isinstance(part, int):
            annotation = _element(annotation)
            continue
        inner = _model_in(annotation)
        field = inner.model_fields.get(part) if inner is not None else None
        if field is None:
            return True
        annotation = field.annotation
    return annotation is None or _contains_secret(annotation, set())


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for a in typing.get_args(annotation) if (m := _model_in(a)) is not None), None)


def _element(annotation: Any) -> Any:
    args = [a for a in typing.get_args(annotation) if a is not type(None) and a is not Ellipsis]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and args:
        return _element(args[0])
    return args[0] if args else annotation


def _contains_secret(annotation: Any, seen: set[type]) -> bool:
    if annotation is SecretStr:
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return False
        seen.add(annotation)
        return any(_contains_secret(f.annotation, seen) for f in annotation.model_fields.values())
    return any(_contains_secret(a, seen) for a in typing.get_args(annotation))
