"""Input checks of the serving simulations: a bad value raises :class:`~roofline.errors.UserError`
with one line naming the parameter (the CLI prints it and exits 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from roofline.errors import UserError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def positive(name: str, value: ArrayLike, *, allow_zero: bool = False) -> np.ndarray:
    """``value`` as a float array, every element finite and > 0 (>= 0 with ``allow_zero``)."""
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise UserError(f"{name}={value!r}: must be a number") from None
    ok = np.isfinite(v) & ((v >= 0) if allow_zero else (v > 0))
    if not np.all(ok):
        bad = v[~ok].ravel()[0] if v.ndim else float(v)
        raise UserError(f"{name}={bad:g}: must be {'0 or more' if allow_zero else 'positive'} and finite")
    return v


def whole(name: str, value: ArrayLike, minimum: int = 1) -> np.ndarray:
    """``value`` as an int64 array, every element a whole number >= ``minimum``."""
    v = np.asarray(value)
    try:
        f = v.astype(float)
    except (TypeError, ValueError):
        raise UserError(f"{name}={value!r}: must be a whole number >= {minimum}") from None
    if not (np.all(np.isfinite(f)) and np.all(f == np.round(f)) and np.all(f >= minimum)):
        bad = f[~(np.isfinite(f) & (f == np.round(f)) & (f >= minimum))].ravel()[0] if f.ndim else float(f)
        raise UserError(f"{name}={bad:g}: must be a whole number >= {minimum}")
    return f.astype(np.int64)
