"""Errors a user can act on.

Every error the user can cause (an unknown name, a malformed or impossible spec
file, a bad flag value) is a :class:`UserError`: the CLI prints its one-line
message and exits with code 2, never a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

EXIT_USER_ERROR = 2

#: C0 and C1 control characters (ESC, BEL, CR, ...) and DEL, never written to a terminal as they are, and lone
#: surrogates (a file name's undecodable bytes), which no terminal encoding can write
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def printable(text: str, keep_newlines: bool = True) -> str:
    """``text`` with every control character written as its escape (``\\x1b``), so that a string read from a
    file (a name, a source, a path) can reach a terminal without moving the cursor, changing its title or
    colours; tabs stay, and newlines unless ``keep_newlines`` is False."""
    out = _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)
    return out if keep_newlines else out.replace("\n", "\\n")


class UserError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""

    exit_code = EXIT_USER_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(printable(" ".join(message.split())))


class SpecError(UserError):
    """A spec file that cannot be used: names the file, the field and the reason."""

    def __init__(self, path: str, field: str, reason: str) -> None:
        self.path, self.field, self.reason = path, field, reason
        where = f"{path}: {field}" if field else path
        super().__init__(f"{where}: {reason}")


class UnknownNameError(UserError):
    """A catalog name that matches nothing; suggests the closest names."""

    def __init__(self, kind: str, name: str, known: Iterable[str], hint: str = "") -> None:
        known = sorted(set(known))
        close = closest(name, known)
        msg = f"unknown {kind} '{name}'"
        if close:
            msg += f"; did you mean: {', '.join(close)}?"
        else:
            msg += f"; known: {', '.join(known)}"
        if hint:
            msg += f" ({hint})"
        super().__init__(msg)


def closest(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The names in ``known`` closest to ``name``: prefix matches first, then by similarity."""
    import difflib

    known = list(known)
    low = name.lower()
    prefix = [k for k in known if k.lower().startswith(low) or low.startswith(k.lower())]
    fuzzy = difflib.get_close_matches(low, known, n=n, cutoff=0.5)
    out: list[str] = []
    for k in prefix + fuzzy:
        if k not in out:
            out.append(k)
    return out[:n]
