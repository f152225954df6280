"""A cache of computed results whose inputs are files: ``roofline accuracy`` refits every stack
profile leave-one-platform-out and simulates each MLPerf Server run's plan (seconds), from the
records, the platform, model and stack files and the code alone.

An entry is keyed by the SHA-256 of everything the result depends on: the bytes and paths of the
input files given, of every file in the catalog folders (platforms, models, stack profiles, the
user's ``ROOFLINE_PLATFORMS`` / ``ROOFLINE_MODELS`` folders too), and of roofline's own source, with
the roofline version and the result type. It lives under the spec cache's folder
(``$ROOFLINE_CACHE_DIR``) and is skipped silently when it cannot be read or written;
``ROOFLINE_NO_CACHE=1`` turns it off (:func:`~roofline.catalog.cache.cache_off`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from roofline.catalog import builtin_dir, search_dirs
from roofline.catalog.cache import cache_dir, cache_off, cached_object
from roofline.version import __version__

T = TypeVar("T")

_SOURCE = Path(__file__).resolve().parents[1]


def _files(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
        elif p.is_file():
            out.append(p)
    return out


def inputs_key(kind: str, inputs: Iterable[Path]) -> str:
    h = hashlib.sha256(f"{kind}\0{__version__}\0".encode())
    catalog = [d for k in ("platforms", "models") for d in search_dirs(k)] + [builtin_dir("platforms") / "stacks"]
    for f in dict.fromkeys(_files([*inputs, *catalog]) + sorted(_SOURCE.rglob("*.py"))):
        h.update(str(f).encode("utf-8", "surrogateescape") + b"\0")
        try:
            h.update(f.read_bytes())
        except OSError:
            h.update(b"\1unreadable")
    return h.hexdigest()


def cached(cls: type[T], kind: str, inputs: Iterable[Path], compute: Callable[[], T]) -> T:
    """``compute()``, or the result stored under the same inputs' key."""
    if cache_off():
        return compute()
    return cached_object(cls, cache_dir() / "results" / f"{kind}-{inputs_key(kind, inputs)[:40]}.json", compute)
