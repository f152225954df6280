"""Validating spec data with pydantic, and rebuilding already-validated data without it.

pydantic is imported here, lazily, and only when :func:`validate` runs.
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from enum import Enum
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

    check_json_types(cls, data, path)
    try:
        return _adapter(cls).validate_python(data)
    except ValidationError as e:
        raise spec_error_from(e, path) from None
    except RecursionError:
        raise SpecError(str(path), "", "nested deeper than any real file") from None


# ------------------------------------------------------------------ strict JSON / TOML types

_TYPE_WORDS = {bool: "true or false", int: "a whole number", float: "a number"}


def check_json_types(tp: Any, value: Any, path: Path | str, where: str = "") -> None:
    """Numbers and booleans must have the type the field needs, as written in the file.

    pydantic's lax mode would read ``true`` as 1, ``1.0`` and ``"8"`` as 8, and ``"false"`` as True;
    in a spec file or a report those are mistakes, refused here with the field's dotted path. Other
    problems (missing fields, wrong strings, shapes) are left to pydantic."""
    if value is None:
        return
    if dataclasses.is_dataclass(tp):
        if isinstance(value, dict):
            hints = _hints(tp)
            for k, v in value.items():
                if k in hints:
                    check_json_types(hints[k], v, path, f"{where}.{k}" if where else str(k))
        return
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        arms = [a for a in args if a is not type(None)]
        if len(arms) == 1:
            check_json_types(arms[0], value, path, where)
        return
    if origin in (tuple, list):
        if isinstance(value, (list, tuple)) and args:
            for i, v in enumerate(value):
                check_json_types(args[0], v, path, f"{where}.{i}")
        return
    if origin is dict:
        if isinstance(value, dict) and len(args) == 2:
            for k, v in value.items():
                check_json_types(args[1], v, path, f"{where}.{k}")
        return
    if tp in _TYPE_WORDS and not _is(tp, value):
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise SpecError(str(path), where, f"must be {_TYPE_WORDS[tp]}, got {shown} ({_json_type(value)})")


def _is(tp: type, value: Any) -> bool:
    if tp is float:
        return type(value) in (int, float)
    return type(value) is tp


def _json_type(value: Any) -> str:
    return {bool: "a boolean", int: "a whole number", float: "a number", str: "a string", list: "a list",
            tuple: "a list", dict: "a table/object"}.get(type(value), type(value).__name__)


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
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(value)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            if dataclasses.is_dataclass(arg) and isinstance(value, dict):
                return build_trusted(arg, value)
            if isinstance(arg, type) and issubclass(arg, Enum) and isinstance(value, str):
                return arg(value)
            container = typing.get_origin(arg)
            if (container in (tuple, list) and isinstance(value, list)) or (container is dict and isinstance(value, dict)):
                return build_trusted(arg, value)  # an optional tuple comes back a tuple, as validated
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
