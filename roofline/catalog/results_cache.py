"""A cache of computed results whose inputs are files: ``roofline accuracy`` refits every stack
profile leave-one-platform-out and simulates each MLPerf Server run's plan (seconds), from the
records, the platform, model and stack files and the code alone.

An entry is keyed by the SHA-256 of everything the result depends on: the identity of the input
files given, of every file in the catalog folders (platforms, models, stack profiles, the user's
``ROOFLINE_PLATFORMS`` / ``ROOFLINE_MODELS`` folders too), and of roofline's own source, with the
roofline version and the result type. A file's identity is its path, size and modification time
(:func:`file_identity`), and its bytes when it is small: a multi-GB GGUF kept beside model files is
never read, and a FIFO or a device is never opened. It lives under the spec cache's folder
(``$ROOFLINE_CACHE_DIR``) and is skipped silently when it cannot be read or written;
``ROOFLINE_NO_CACHE=1`` turns it off (:func:`~roofline.catalog.cache.cache_off`).
"""

from __future__ import annotations

import hashlib
import os
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


#: files up to this size are hashed by content as well as by identity (every spec file and record is)
HASHED_BYTES = 1 << 20


def file_identity(f: Path) -> bytes:
    """What a cache key takes from one file: its path, size and modification time in nanoseconds, and its
    bytes when it is a regular file of at most :data:`HASHED_BYTES` (read bounded, never whole)."""
    import stat

    from roofline.errors import UserError
    from roofline.files.reading import read_bytes

    name = str(f).encode("utf-8", "surrogateescape")
    try:
        st = os.stat(f)
    except (OSError, ValueError):
        return name + b"\0\1unreadable"
    head = name + f"\0{st.st_size}\0{st.st_mtime_ns}\0".encode()
    if not stat.S_ISREG(st.st_mode) or st.st_size > HASHED_BYTES:
        return head
    try:
        return head + hashlib.sha256(read_bytes(f, max_bytes=HASHED_BYTES)).digest()
    except UserError:
        return head + b"\1unreadable"


def inputs_key(kind: str, inputs: Iterable[Path]) -> str:
    h = hashlib.sha256(f"{kind}\0{__version__}\0".encode())
    catalog = [d for k in ("platforms", "models") for d in search_dirs(k)] + [builtin_dir("platforms") / "stacks"]
    for f in dict.fromkeys(_files([*inputs, *catalog]) + sorted(_SOURCE.rglob("*.py"))):
        h.update(file_identity(f) + b"\0")
    return h.hexdigest()


def cached(cls: type[T], kind: str, inputs: Iterable[Path], compute: Callable[[], T]) -> T:
    """``compute()``, or the result stored under the same inputs' key."""
    if cache_off():
        return compute()
    return cached_object(cls, cache_dir() / "results" / f"{kind}-{inputs_key(kind, inputs)[:40]}.json", compute)
