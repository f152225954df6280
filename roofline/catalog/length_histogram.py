"""Reading a histogram of request lengths (``roofline plan --seq-len-histogram FILE``).

The format: UTF-8 text, one bin per line, ``LENGTH WEIGHT`` separated by spaces, tabs or one
comma; ``LENGTH`` a whole number of tokens (1 or more), ``WEIGHT`` a finite number, 0 or more (a
count or a fraction: the weights are normalised). Blank lines and ``#`` comments are skipped; a
repeated length adds its weights up. For example::

    # prompt lengths seen in a day of traffic
    128  4100
    256  2300
    512  900
    1024 120

Anything else (a missing weight, a fractional or negative length, NaN, a third column, no bin at
all, every weight 0, weights whose sum overflows, a file over 16 MiB) is refused in one line
naming the file and the line.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from roofline.errors import UserError
from roofline.files.reading import MAX_BYTES, read_bytes

_SPLIT = re.compile(r"\s*,\s*|\s+")


def read_length_histogram(path: str | Path, flag: str = "--seq-len-histogram",
                          max_length: int | None = None) -> tuple[list[int], list[float]]:
    """``(lengths, weights)`` from a histogram file (see the module docstring)."""
    label = f"{flag} {path}"
    raw = read_bytes(Path(path), label, MAX_BYTES)  # a regular file of at most 16 MiB: a million bins
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{label}: not UTF-8 text; give 'length weight' lines") from None
    lengths: list[int] = []
    weights: list[float] = []
    for number, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        fields = _SPLIT.split(body)
        if len(fields) != 2:
            raise UserError(f"{label}: line {number}: '{_short(body)}' is not 'length weight' (two numbers)")
        length, weight = _number(fields[0]), _number(fields[1])
        if length is None or not (length >= 1 and length == int(length)):
            raise UserError(f"{label}: line {number}: length '{_short(fields[0])}' is not a whole number of "
                            "tokens >= 1")
        if max_length is not None and length > max_length:
            raise UserError(f"{label}: line {number}: length {int(length):,} is longer than {max_length:,} tokens "
                            "(the model's positions)")
        if weight is None or weight < 0:
            raise UserError(f"{label}: line {number}: weight '{_short(fields[1])}' is not a finite number >= 0")
        lengths.append(int(length))
        weights.append(weight)
    if not lengths:
        raise UserError(f"{label}: holds no 'length weight' line")
    total = sum(weights)  # inf past the largest float (fsum raises)
    if not total > 0:
        raise UserError(f"{label}: every weight is 0; give at least one positive weight")
    if not math.isfinite(total):
        raise UserError(f"{label}: the weights add up past the largest number; scale them down")
    return lengths, weights


def _number(text: str) -> float | None:
    try:
        v = float(text)
    except (ValueError, OverflowError):
        return None
    return v if math.isfinite(v) else None


def _short(text: str, n: int = 40) -> str:
    text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= n else text[: n - 3] + "..."
