"""A cache of validated spec files, keyed by content.

Validating a spec file needs pydantic, whose import alone costs more than the
whole cold-start budget of ``roofline estimate``. A file validated once is
stored, already validated, under ``$ROOFLINE_CACHE_DIR`` (default
``$XDG_CACHE_HOME/roofline`` or ``~/.cache/roofline``) as JSON, named by the
SHA-256 of everything the result depends on: the file's bytes, its path (a
Hugging Face ``config.json`` takes its model name and source from the path, so
two identical files in ``modelA/`` and ``modelB/`` are two different models),
the spec type (its name and its fields), the roofline version and the code that reads and checks spec
files (the size and modification time of every module of ``roofline/spec`` and ``roofline/catalog``: an
edited checkout of the same version never reads an entry another wrote). Any change to one of them misses
the cache and validates again; a cache that cannot be read or written is skipped
silently (it is only a cache).
``ROOFLINE_NO_CACHE=1`` turns it off (``0``, ``false``, ``no`` or empty leave it on).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from roofline.catalog.validate import build_trusted, to_plain, validate
from roofline.version import __version__

T = TypeVar("T")


def cache_off() -> bool:
    """``ROOFLINE_NO_CACHE`` set to anything but empty, ``0``, ``false`` or ``no`` (any case): the caches are off."""
    return os.environ.get("ROOFLINE_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no")


def cache_dir() -> Path:
    env = os.environ.get("ROOFLINE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "roofline"


@functools.cache
def code_key() -> str:
    """The reading code's identity: every spec and catalog module's name, size and modification time."""
    package = Path(__file__).resolve().parents[1]
    parts = []
    for folder in ("spec", "catalog"):
        for f in sorted((package / folder).glob("*.py")):
            try:
                st = f.stat()
            except OSError:
                continue
            parts.append(f"{folder}/{f.name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def type_key(cls: type) -> str:
    """The spec type as a cache key: its name and its fields with their types (a field added or changed by
    another checkout of the same version never reads an entry written without it)."""
    fields = getattr(cls, "__dataclass_fields__", {})
    return f"{cls.__module__}.{cls.__qualname__}(" + ";".join(f"{n}:{f.type}" for n, f in fields.items()) + ")"


def load_validated(cls: type[T], path: Path, parse: Callable[[bytes], dict[str, Any]]) -> T:
    """``cls`` from the file at ``path``: from the cache when the same bytes were validated before."""
    from roofline.files.reading import read_bytes

    raw = read_bytes(path)
    if cache_off():
        return validate(cls, parse(raw), path)
    key = hashlib.sha256(raw + f"\0{type_key(cls)}\0{__version__}\0{code_key()}\0{path}".encode(
        "utf-8", "surrogateescape")).hexdigest()
    return cached_object(cls, cache_dir() / "specs" / f"{cls.__name__}-{key[:40]}.json", lambda: validate(cls, parse(raw), path))


#: the most bytes a cache entry may hold: the largest (an accuracy result) is a few hundred kB
MAX_ENTRY_BYTES = 64 << 20


def cached_object(cls: type[T], entry: Path, build: Callable[[], T]) -> T:
    """The entry's object when it can be read back, else ``build()``, stored for next time.

    Only a regular file of at most :data:`MAX_ENTRY_BYTES` is read (a FIFO, a device, a link to ``/dev/zero``
    is passed over without opening it for long); an entry that does not rebuild into ``cls`` (valid JSON of
    another shape, a value its checks refuse) is discarded and rebuilt: it is only a cache."""
    found = read_entry(cls, entry)
    if found is not None:
        return found
    obj = build()
    store_entry(entry, to_plain(obj))
    return obj


def read_entry(cls: type[T], entry: Path) -> T | None:
    """The object stored at ``entry``, or None when there is none or it cannot be used."""
    from roofline.files.reading import read_bytes

    try:
        raw = read_bytes(entry, max_bytes=MAX_ENTRY_BYTES)
        return build_trusted(cls, json.loads(raw.decode("utf-8")))
    except Exception:  # noqa: BLE001 - a miss, an unreadable or a foreign entry: validate afresh
        return None


def store_entry(entry: Path, data: Any) -> None:
    """``data`` as JSON at ``entry``, through a temporary file beside it that is removed on every failure;
    a cache that cannot be written is skipped."""
    import tempfile

    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f"{entry.name}.{os.getpid()}.", suffix=".tmp", dir=entry.parent)
    except (OSError, ValueError):
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(data))
        os.replace(name, entry)
    except BaseException as e:
        try:
            os.unlink(name)
        except OSError:
            pass
        if not isinstance(e, (OSError, ValueError, TypeError)):
            raise


def folder_index_entry(kind: str, folder: Path, files: list[Path]) -> Path | None:
    """Where a catalog folder's index (every name and alias -> its file, and the files refused with why) is cached,
    keyed by the folder, every file's path, size, modification time and inode (what it links to, for a link) and
    the reading code: 60,000 invalid files in ``ROOFLINE_PLATFORMS`` are validated once, not on every command.
    None when the cache is off."""
    if cache_off():
        return None
    h = hashlib.sha256(f"{kind}\0{__version__}\0{code_key()}\0{folder}".encode("utf-8", "surrogateescape"))
    for f in files:
        try:
            st = os.stat(f)
            h.update(f"\0{f}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}".encode("utf-8", "surrogateescape"))
        except (OSError, ValueError):
            h.update(f"\0{f}\0gone".encode("utf-8", "surrogateescape"))
    return cache_dir() / "index" / f"{kind}-{h.hexdigest()[:40]}.json"


def read_index(entry: Path) -> tuple[dict[str, str], list[tuple[str, str]]] | None:
    """The names and refusals :func:`folder_index_entry`'s entry holds, or None (a miss, or an entry of another
    shape: rebuilt)."""
    from roofline.files.reading import read_bytes

    try:
        data = json.loads(read_bytes(entry, max_bytes=MAX_ENTRY_BYTES).decode("utf-8"))
        names, refused = data["names"], data["refused"]
        if not (isinstance(names, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in names.items())
                and isinstance(refused, list) and all(isinstance(r, list) and len(r) == 2 and
                                                      all(isinstance(x, str) for x in r) for r in refused)):
            return None
        return names, [(f, why) for f, why in refused]
    except Exception:  # noqa: BLE001 - only a cache
        return None


def load_validated_file(cls: type[T], path: Path, fields: Callable[[], dict[str, Any]]) -> T:
    """``cls`` from a file too large to hash (a GGUF file of many GB, whose header alone is read): cached by
    the file's identity, its path, size, modification time, inode and device, instead of its bytes."""
    if cache_off():
        return validate(cls, fields(), path)
    try:
        st = os.stat(path)
    except OSError:
        return validate(cls, fields(), path)  # fields() names the problem
    identity = f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0{st.st_dev}"
    key = hashlib.sha256(f"{identity}\0{type_key(cls)}\0{__version__}\0{code_key()}".encode(
        "utf-8", "surrogateescape")).hexdigest()
    return cached_object(cls, cache_dir() / "specs" / f"{cls.__name__}-file-{key[:40]}.json",
                   lambda: validate(cls, fields(), path))
