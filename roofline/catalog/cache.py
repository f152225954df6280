"""A cache of validated spec files, keyed by content.

Validating a spec file needs pydantic, whose import alone costs more than the
whole cold-start budget of ``roofline estimate``. A file validated once is
stored, already validated, under ``$ROOFLINE_CACHE_DIR`` (default
``$XDG_CACHE_HOME/roofline`` or ``~/.cache/roofline``) as JSON, named by the
SHA-256 of everything the result depends on: the file's bytes, its path (a
Hugging Face ``config.json`` takes its model name and source from the path, so
two identical files in ``modelA/`` and ``modelB/`` are two different models),
the spec type and the roofline version. Any change to one of them misses the
cache and validates again; a cache that cannot be read or written is skipped
silently (it is only a cache).
``ROOFLINE_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from roofline.version import __version__
from roofline.catalog.validate import build_trusted, to_plain, validate

T = TypeVar("T")


def cache_dir() -> Path:
    env = os.environ.get("ROOFLINE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "roofline"


def load_validated(cls: type[T], path: Path, parse: Callable[[bytes], dict[str, Any]]) -> T:
    """``cls`` from the file at ``path``: from the cache when the same bytes were validated before."""
    from roofline.files.reading import read_bytes

    raw = read_bytes(path)
    if os.environ.get("ROOFLINE_NO_CACHE"):
        return validate(cls, parse(raw), path)
    key = hashlib.sha256(raw + f"\0{cls.__module__}.{cls.__qualname__}\0{__version__}\0{path}".encode(
        "utf-8", "surrogateescape")).hexdigest()
    entry = cache_dir() / "specs" / f"{cls.__name__}-{key[:40]}.json"
    try:
        with open(entry, encoding="utf-8") as f:
            return build_trusted(cls, json.load(f))
    except (OSError, ValueError, TypeError, KeyError):
        pass  # a miss, or an unreadable entry: validate afresh
    obj = validate(cls, parse(raw), path)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(to_plain(obj)), encoding="utf-8")
        os.replace(tmp, entry)
    except OSError:
        pass
    return obj
