"""Writing output files: whole or not at all, never clobbering what the user did not mean to replace.

Every file a command writes (``--json FILE``, ``-o FILE``, the probe cache) goes through here:

- the path is followed through symlinks, and the *target* is replaced atomically: the text goes to a
  temporary file in the target's own folder, which is renamed over the target once complete, so an
  error or an interrupt leaves the old contents exactly as they were, and the link stays a link;
- a FIFO, a socket or a device is refused (a FIFO without a reader would block for ever; a disk, as root,
  would be overwritten), except the command's own standard output or error (``/dev/stdout``) and the
  devices that keep nothing (``/dev/null``, ``/dev/zero``, ``/dev/full``), which are written straight into,
  never replaced;
- an existing file keeps its mode (and, where permitted, its owner);
- a read-only file is refused unless ``force`` (``--force``); a directory, a missing folder or a
  folder that cannot be written is a :class:`~roofline.errors.UserError` naming the path.

:func:`check_target` does the checks without writing, so a command can refuse a bad output path
before it spends any time.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from roofline.errors import UserError


@dataclass(frozen=True)
class Target:
    """Where a write to ``given`` really lands."""

    given: str
    """the path as the user wrote it (for messages)"""
    path: Path
    """symlinks resolved"""
    existing: os.stat_result | None
    """the target's status, None when it does not exist yet"""

    @property
    def special(self) -> bool:
        """A FIFO, a device or a socket: written straight into, never replaced."""
        return self.existing is not None and not stat.S_ISREG(self.existing.st_mode)


#: the character devices an output may be, as (major, minor): Linux's /dev/null, /dev/zero and /dev/full, which
#: take writes and keep nothing (``/dev/mem``, 1:1, is the same major: the minor matters)
HARMLESS_DEVICES = frozenset({(1, 3), (1, 5), (1, 7)})


def special_target_problem(st: os.stat_result) -> str | None:
    """Why a FIFO, socket or device cannot be an output (None for the standard output or error, and the
    harmless devices): writing into a disk or a pipe nobody reads is never what a file name meant."""
    for fd in (1, 2):
        try:
            std = os.fstat(fd)
        except OSError:
            continue
        if (std.st_dev, std.st_ino) == (st.st_dev, st.st_ino) and not stat.S_ISREG(std.st_mode):
            return None
    if stat.S_ISCHR(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) in HARMLESS_DEVICES:
        return None
    from roofline.files.reading import file_kind

    return (f"is {file_kind(st.st_mode)}, not a file: an output is written to a regular file (or '-' for the "
            "standard output)")


def _read_only(st: os.stat_result, path: Path) -> bool:
    # mode bits as well as access(): root may write anything, but a file with no write bit was
    # made read-only on purpose
    return not (st.st_mode & 0o222) or not os.access(path, os.W_OK)


def check_target(given: str | os.PathLike, *, force: bool = False) -> Target:
    """Resolve ``given`` and check it can be written; raises a one-line UserError when it cannot."""
    given = os.fspath(given)
    if not given:
        raise UserError("an empty output path: give a file name")
    try:  # a magic link (/dev/stdout -> /proc/self/fd/1 -> pipe:[...]) is followed by stat, not by realpath
        first = os.stat(Path(given).expanduser())
    except (OSError, ValueError):
        first = None
    if first is not None and not stat.S_ISREG(first.st_mode) and not stat.S_ISDIR(first.st_mode):
        problem = special_target_problem(first)
        if problem:
            raise UserError(f"{given}: {problem}")
        return Target(given, Path(given).expanduser(), first)
    path = Path(os.path.realpath(Path(given).expanduser()))
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UserError(f"{given}: cannot write here ({e.strerror or e})") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UserError(f"{given}: is a directory; give a file name inside it")
    target = Target(given, path, st)
    if target.special:
        problem = special_target_problem(st)
        if problem:
            raise UserError(f"{given}: {problem}")
        return target
    parent = path.parent
    if not parent.is_dir():
        raise UserError(f"{given}: the folder {parent} does not exist; create it first")
    if st is not None and _read_only(st, path) and not force:
        raise UserError(f"{given}: the file is read-only; give --force to replace it")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"{given}: cannot create files in {parent} (permission denied)")
    return target


@contextlib.contextmanager
def replacing(given: str | os.PathLike, *, force: bool = False) -> Iterator[Path]:
    """A path to write the new contents to; on a clean exit it replaces the target.

    For a regular (or new) file the yielded path is a temporary file beside the target, with the
    same suffix (so tools that infer the format from the name still can); it is renamed over the
    target when the block ends without an exception, and removed otherwise. For a FIFO or a
    device the yielded path is the target itself."""
    target = check_target(given, force=force)
    if target.special:
        yield target.path
        return
    import tempfile

    path = target.path
    prefix, suffix = temporary_affixes(path)
    # Ctrl-C and SIGTERM held off from before the temporary file exists until the block that removes it on
    # an exception is entered: one arriving in between is raised there, so no temporary file is left behind
    held = _hold_interrupts()
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=path.parent)
    except OSError as e:
        _release_interrupts(held)
        raise UserError(f"{target.given}: cannot write in {path.parent} ({e.strerror or e})") from None
    tmp = Path(tmp_name)
    try:
        try:
            os.close(fd)
        finally:
            _release_interrupts(held)
        yield tmp
        _take_over_metadata(tmp, target.existing)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _hold_interrupts():
    """Block SIGINT and SIGTERM in this thread (where the platform can); the previous mask, or None."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def _release_interrupts(held) -> None:
    """Restore the mask :func:`_hold_interrupts` returned: a signal that arrived meanwhile is raised now."""
    if held is not None:
        import signal

        signal.pthread_sigmask(signal.SIG_SETMASK, held)


#: the random part mkstemp puts between the prefix and the suffix
_RANDOM_CHARS = 8


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255


def temporary_affixes(path: Path) -> tuple[str, str]:
    """The prefix and suffix of the temporary file beside ``path``: ``.<name>.`` and ``.tmp<suffix>`` (the
    same suffix, for tools that infer the format from the name), the name shortened so that the whole
    temporary name fits the folder's file-name limit (a legal 250-byte name must be writable)."""
    suffix = f".tmp{path.suffix}" if len(os.fsencode(path.suffix)) <= 16 else ".tmp"
    room = _name_max(path.parent) - len(os.fsencode(suffix)) - _RANDOM_CHARS - 2  # the leading and the last dot
    name = path.name
    while name and len(os.fsencode(name)) > room:
        name = name[:-1]
    return f".{name}.", suffix


def _take_over_metadata(tmp: Path, existing: os.stat_result | None) -> None:
    if existing is None:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; an output is an ordinary file
        return
    os.chmod(tmp, stat.S_IMODE(existing.st_mode))
    if (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(OSError):
            os.chown(tmp, existing.st_uid, existing.st_gid)


@contextlib.contextmanager
def open_text(given: str | os.PathLike, *, force: bool = False, newline: str | None = None) -> Iterator[IO[str]]:
    """A text file to stream into (UTF-8, a lone surrogate written as ``\\udcff``); the target is replaced only
    when the block completes."""
    with replacing(given, force=force) as path:
        try:
            # a lone surrogate (a file name's undecodable byte, carried in a name or a source) is written as the
            # text of its escape, as printable() shows it: never a UnicodeEncodeError after the work is done
            f = open(path, "w", encoding="utf-8", errors="backslashreplace", newline=newline)
        except OSError as e:
            raise UserError(f"{os.fspath(given)}: cannot write ({e.strerror or e})") from None
        try:
            with f:  # closing flushes the last buffered rows: a full disk may show only there
                yield f
        except BrokenPipeError:
            raise
        except OSError as e:  # a full disk, an I/O error: the target is left as it was
            raise UserError(f"{os.fspath(given)}: cannot write ({e.strerror or e})") from None


def write_text(given: str | os.PathLike, text: str, *, force: bool = False) -> None:
    """Write ``text`` to ``given``, whole or not at all (see the module docstring)."""
    with open_text(given, force=force) as f:
        f.write(text)
