"""Writing results: JSON atomically (whole or not at all), reports through rich."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from roofline.errors import UserError


def json_text(result) -> str:
    """A dataclass tree as JSON; NaN or infinity anywhere is a bug and raises ValueError."""
    import dataclasses
    import json

    if isinstance(result, list):
        data = [dataclasses.asdict(x) for x in result]
    else:
        data = dataclasses.asdict(result)
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def write_json(result, dest: str) -> None:
    text = json_text(result)
    if dest == "-":
        sys.stdout.write(text)
        return
    write_text_atomic(Path(dest), text)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: never a half-written file."""
    import tempfile

    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; a report is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def print_rich(renderable) -> None:
    """Print through rich; 100 columns when stdout is not a terminal (files, pipes) and COLUMNS is unset."""
    from rich.console import Console

    width = None
    if not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        width = 100
    Console(width=width).print(renderable)


def emit(result, args, render) -> int:
    """The common ending of a command: JSON to stdout (and nothing else), or to a file and the tables,
    or the tables; ``render`` builds the rich renderable, imported only when tables are printed."""
    if getattr(args, "json", None):
        write_json(result, args.json)
        if args.json == "-":
            return 0
    print_rich(render())
    return 0
