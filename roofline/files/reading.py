"""Reading spec files (TOML, JSON) into plain data, with one-line errors.

Spec files are data: they are parsed, never executed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from roofline.errors import SpecError


def _tomllib():
    """The TOML parser, imported when a file is parsed (a validated file comes from the cache as JSON)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


def read_bytes(path: Path, label: str | None = None) -> bytes:
    """The file's bytes; an unreadable file is a SpecError naming ``label`` (default: the path)."""
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise SpecError(label or str(path), "", f"cannot read: {e.strerror or e}") from None


def parse_toml(raw: bytes, path: Path | str) -> dict[str, Any]:
    tomllib = _tomllib()
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise SpecError(str(path), "", f"not UTF-8 text: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(str(path), "", f"not valid TOML: {e}") from None
    except RecursionError:
        raise SpecError(str(path), "", "not usable TOML: nested deeper than any real file") from None
    except ValueError as e:  # e.g. an integer of thousands of digits
        raise SpecError(str(path), "", f"not usable TOML: {_short(e)}") from None


def parse_json(raw: bytes, path: Path | str) -> dict[str, Any]:
    data = load_json(raw, path)
    if not isinstance(data, dict):
        raise SpecError(str(path), "", "expected a JSON object at the top level")
    return data


def load_json(raw: bytes, path: Path | str) -> Any:
    """Any JSON value from ``raw``; text that is not JSON is a one-line SpecError."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise SpecError(str(path), "", "not JSON: not UTF-8 text (a binary file?)") from None
    except json.JSONDecodeError as e:
        raise SpecError(str(path), "", f"not valid JSON: {e}") from None
    except RecursionError:
        raise SpecError(str(path), "", "not usable JSON: nested deeper than any real file") from None
    except ValueError as e:  # e.g. an integer of thousands of digits
        raise SpecError(str(path), "", f"not usable JSON: {_short(e)}") from None


def _short(e: Exception) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= 120 else text[:117] + "..."


def read_toml(path: Path) -> dict[str, Any]:
    return parse_toml(read_bytes(path), path)
