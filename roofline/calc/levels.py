"""The memory level a tensor is priced at, and the time to move bytes there.

The memory-level roofline (Intel Advisor's CARM, applied to a model): each tensor class is read
from the fastest level whose capacity holds its working set, so its bytes cost
``bytes / B_level``, and an operation's memory time is the sum over the levels it touches:

``t_memory = sum_levels bytes_at_level / B_level``

Levels are indexed 0 = L2, 1 = LLC, 2 = DRAM. A level that is not modelled has capacity 0 (it
never holds anything) and DRAM holds everything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

LEVELS: tuple[str, ...] = ("L2", "LLC", "DRAM")
L2, LLC, DRAM = 0, 1, 2


def level_of(working_set: ArrayLike, l2_capacity: ArrayLike, llc_capacity: ArrayLike) -> np.ndarray:
    """``0`` (L2) when ``working_set <= l2_capacity``, else ``1`` (LLC) when ``<= llc_capacity``, else
    ``2`` (DRAM). Capacities are the bytes the level holds for the work in question (one instance's
    share); a capacity of 0 means the level is not modelled."""
    ws = np.asarray(working_set, dtype=float)
    l2c, llcc = np.asarray(l2_capacity, dtype=float), np.asarray(llc_capacity, dtype=float)
    return np.where((ws <= l2c) & (l2c > 0), L2, np.where((ws <= llcc) & (llcc > 0), LLC, DRAM)).astype(np.int8)


def level_bandwidth(level: ArrayLike, b_l2: ArrayLike, b_llc: ArrayLike, b_dram: ArrayLike) -> np.ndarray:
    """The bandwidth of each element's level: ``B_L2``, ``B_LLC`` or ``B_DRAM`` (bytes/s)."""
    lv = np.asarray(level)
    return np.where(lv == L2, np.asarray(b_l2, dtype=float),
                    np.where(lv == LLC, np.asarray(b_llc, dtype=float), np.asarray(b_dram, dtype=float)))


def llc_resident(weight_bytes: ArrayLike, llc_bytes: ArrayLike) -> np.ndarray:
    """The weight set stays in the LLC when ``sum_i D_W,i <= LLC`` (one shared copy per LLC domain)."""
    return np.asarray(weight_bytes, dtype=float) <= np.asarray(llc_bytes, dtype=float)
