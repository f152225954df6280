"""Validating spec data with pydantic, and rebuilding already-validated data without it.

pydantic is imported here, lazily, and only when :func:`validate` runs.
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from roofline.errors import SpecError

T = TypeVar("T")


@cache
def _adapter(cls: type) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(cls)


def validate(cls: type[T], data: dict[str, Any], path: Path | str) -> T:
    """``cls`` built from ``data`` with pydantic's checks; the first problem becomes a one-line SpecError."""
    from pydantic import ValidationError

    try:
        return _adapter(cls).validate_python(data)
    except ValidationError as e:
        raise spec_error_from(e, path) from None


def spec_error_from(e: Any, path: Path | str) -> SpecError:
    """One line from a pydantic ValidationError: the field's dotted path and the reason."""
    err = e.errors(include_url=False)[0]
    field = ".".join(str(p) for p in err["loc"])
    reason = err["msg"].removeprefix("Value error, ")
    if err["type"] == "missing" or err["type"] == "missing_argument":
        reason = "required field is missing"
    elif err["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
        reason = "unknown field (a typo?)"
    elif "input" in err and err["type"] not in ("value_error", "assertion_error"):
        reason += f" (got {err['input']!r})"
    if ": " in reason and reason.split(": ", 1)[0].replace(".", "").replace("_", "").replace("-", "").isalnum():
        # our own checks say "field: reason", relative to where they ran
        sub, reason = reason.split(": ", 1)
        field = f"{field}.{sub}" if field else sub
    more = e.error_count() - 1
    if more:
        reason += f" (and {more} more problem{'s' if more > 1 else ''})"
    return SpecError(str(path), field, reason)


# ------------------------------------------------------------------ trusted rebuild


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, sys.modules[cls.__module__].__dict__)


def build_trusted(tp: Any, value: Any) -> Any:
    """Rebuild ``tp`` from data that pydantic already validated (e.g. :func:`to_plain` output).

    Types are trusted; each dataclass's ``__post_init__`` checks still run.
    """
    if value is None:
        return None
    if dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        return tp(**{k: build_trusted(hints[k], v) for k, v in value.items()})
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            if dataclasses.is_dataclass(arg) and isinstance(value, dict):
                return build_trusted(arg, value)
        return value
    if origin is tuple:
        return tuple(build_trusted(args[0], v) for v in value)
    if origin is list:
        return [build_trusted(args[0], v) for v in value]
    if origin is dict:
        return {k: build_trusted(args[1], v) for k, v in value.items()}
    return value


def to_plain(obj: Any) -> Any:
    """JSON-ready dicts and lists from a dataclass tree."""
    return dataclasses.asdict(obj)
