"""Reading the files a command is given (TOML, JSON, a GGUF header, a histogram, a report, a record,
a calibration, a stack profile) into plain data, with one-line errors: the one boundary for untrusted
input.

Every read goes through :func:`open_regular` / :func:`read_bytes`:

- only a regular file is read: a FIFO, a device (``/dev/zero``), a socket or a directory is refused
  before a byte is read (the file is opened non-blocking, so a FIFO without a writer cannot hang the
  command, and its type is checked on the open descriptor);
- the size is capped while reading, not from ``st_size`` (which a special or growing file does not
  give truthfully): at most ``max_bytes`` are read, and a longer file is refused;
- a symlink loop, a missing file, a permission problem are one line naming the file;
- spec files are data: they are parsed, never executed.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from roofline.errors import SpecError

#: the most bytes a spec file, a config.json, a report, a record or a histogram may hold: the largest
#: real ones are a few MB (a validate report of many shapes), so 16 MiB is room, not a limit anyone meets
MAX_BYTES = 16 << 20

_CHUNK = 1 << 20


def _tomllib():
    """The TOML parser, imported when a file is parsed (a validated file comes from the cache as JSON)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _why(e: OSError) -> str:
    if e.errno == errno.ELOOP:
        return "cannot read: a symlink loop (the link points back at itself)"
    return f"cannot read: {e.strerror or e}"


def regular_file_problem(path: Path | str) -> str | None:
    """Why ``path`` cannot be read as a regular file (it is missing, a FIFO, a device, a symlink loop, ...), or
    None when it can. Follows symlinks (a link to a regular file is one) without opening anything."""
    try:
        st = os.stat(path)
    except OSError as e:
        return _why(e)
    except ValueError:  # a NUL byte in the name
        return "cannot read: the name holds a NUL byte"
    if not stat.S_ISREG(st.st_mode):
        return f"{file_kind(st.st_mode)}, not a regular file; give a file"
    return None


def is_file(path: Path | str) -> bool:
    """``Path.is_file()``, False for a name the system cannot look up (a component over 255 bytes, a NUL byte)
    instead of an OSError: a name given is then looked up as a catalog name, or named as unknown."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def is_dir(path: Path | str) -> bool:
    """``Path.is_dir()``, False where the name cannot be looked up (see :func:`is_file`)."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


@contextmanager
def open_regular(path: Path | str, label: str | None = None) -> Iterator[IO[bytes]]:
    """``path`` opened for reading in binary, when it is a regular file; else a one-line SpecError naming
    ``label`` (default: the path)."""
    where = label or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise SpecError(where, "", _why(e)) from None
    except ValueError:
        raise SpecError(where, "", "cannot read: the name holds a NUL byte") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SpecError(where, "", f"{file_kind(st.st_mode)}, not a regular file; give a file")
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f


def read_bytes(path: Path | str, label: str | None = None, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's bytes, at most ``max_bytes`` (counted while reading); an unreadable, special or larger file
    is a SpecError naming ``label`` (default: the path)."""
    where = label or str(path)
    with open_regular(path, label) as f:
        parts, total = [], 0
        try:
            while True:
                chunk = f.read(min(_CHUNK, max_bytes + 1 - total))
                if not chunk:
                    break
                parts.append(chunk)
                total += len(chunk)
                if total > max_bytes:
                    raise SpecError(where, "", f"larger than {max_bytes:,} bytes, more than any file of its kind "
                                               "holds; give the right file")
        except OSError as e:
            raise SpecError(where, "", _why(e)) from None
    return b"".join(parts)


def parse_toml(raw: bytes, path: Path | str) -> dict[str, Any]:
    tomllib = _tomllib()
    try:
        return tomllib.loads(raw.decode("utf-8-sig"))  # a byte-order mark (Windows editors write one) is dropped
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
        return json.loads(raw.decode("utf-8-sig"))  # a byte-order mark is dropped, as for TOML
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


def resolved(path: Path | str) -> Path:
    """``path`` with its symlinks resolved where they resolve; a symlink loop or a missing part leaves the
    rest as given (reading it then names the problem), never an exception."""
    try:
        return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))
    except (OSError, ValueError, RuntimeError):
        return Path(path)


def portable_path(path: str | Path, base: str | Path | None = None) -> str:
    """How a result names a file without the absolute path of the machine that made it: relative to ``base`` (the
    working directory, by default) when the file is under it, ``~/...`` under the home folder, else its name alone
    (results are shared; a path of the machine that made them means nothing elsewhere)."""
    p = Path(path).expanduser()
    if not p.is_absolute():
        return str(path)
    for root, shown in ((Path(base or Path.cwd()), None), (Path.home(), "~")):
        if root.resolve() == Path(root.resolve().anchor):  # the file system's root: the path itself, no shorter
            continue
        try:
            rel = p.resolve().relative_to(root.resolve())
        except (ValueError, OSError):
            continue
        return str(rel) if shown is None else f"{shown}/{rel}"
    return p.name


def shown_path(path: str | Path) -> str:
    """How a page or a result names a file of the catalog or any other: relative to the checkout or the installed
    package that holds roofline's own files (``validation/records/corpus/x.toml``, ``platforms/stacks/y.toml``) when
    it is under it, else as :func:`portable_path` does; never the absolute path of the machine that made it."""
    root = Path(__file__).resolve().parents[2]  # the checkout (roofline/files/reading.py -> its root)
    try:
        return str(Path(path).resolve().relative_to(root))
    except (ValueError, OSError, RuntimeError):
        return portable_path(path)


def utf8_text(raw: bytes, path: str, what: str) -> str:
    """A measurement file's bytes as text (a leading byte-order mark dropped), or a one-line SpecError saying it
    is not ``what`` (``a llama-bench result``) as UTF-8 text."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SpecError(path, "", f"not {what}: not UTF-8 text") from None
