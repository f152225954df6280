"""Last-level-cache residency of the weights."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def llc_resident(weight_bytes: ArrayLike, llc_bytes: ArrayLike) -> np.ndarray:
    """The weight set stays in the LLC when ``sum_i D_W,i <= LLC`` (one shared copy per LLC domain)."""
    return np.asarray(weight_bytes, dtype=float) <= np.asarray(llc_bytes, dtype=float)


def effective_bandwidth(d_x: ArrayLike, d_w: ArrayLike, d_y: ArrayLike, b_mem: ArrayLike, b_llc: ArrayLike) -> np.ndarray:
    """Bandwidth seen by a GEMM whose weights stream from the LLC while X and Y go to DRAM:

    ``B_eff = (D_X + D_W + D_Y) / (D_X / B_mem + D_W / B_LLC + D_Y / B_mem)``

    a byte-weighted harmonic mean, so ``B_mem <= B_eff <= B_LLC`` whenever ``B_mem <= B_LLC``.
    """
    d_x, d_w, d_y = (np.asarray(a, dtype=float) for a in (d_x, d_w, d_y))
    b_mem, b_llc = np.asarray(b_mem, dtype=float), np.asarray(b_llc, dtype=float)
    return (d_x + d_w + d_y) / ((d_x + d_y) / b_mem + d_w / b_llc)
