"""Amdahl's law for the end-to-end ceiling."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def amdahl(f: ArrayLike, s: ArrayLike, s_non: ArrayLike = 1.0) -> np.ndarray:
    """``S = 1 / (f / s + (1 - f) / s_non)``.

    ``f``: the GEMM (linear-block) share of the baseline's time, in [0, 1];
    ``s``: the GEMM speedup; ``s_non``: the speedup of everything else.
    """
    f = np.asarray(f, dtype=float)
    return 1.0 / (f / np.asarray(s, dtype=float) + (1.0 - f) / np.asarray(s_non, dtype=float))
