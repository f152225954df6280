"""Number formatting for tables: decimal units (MB = 1e6 bytes), a few significant figures."""

from __future__ import annotations

import math


def sig(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant figures, without scientific notation for table-sized numbers."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    mag = math.floor(math.log10(abs(x)))
    decimals = max(digits - 1 - mag, 0)
    return f"{x:,.{decimals}f}"


def tera(x: float) -> str:
    return sig(x / 1e12)


def giga(x: float) -> str:
    return sig(x / 1e9)


def mega(x: float) -> str:
    return sig(x / 1e6)


def ms(seconds: float) -> str:
    return sig(seconds * 1e3)


def ratio(x: float) -> str:
    return f"{x:.2f}x"


def pct(x: float) -> str:
    return f"{100 * x:,.0f}%" if x >= 10 else f"{100 * x:.1f}%"
