"""A second memory tier beside a socket's DRAM: on-package HBM (Xeon Max) or CXL-attached memory.

A decode step reads every resident byte it uses once: the weights, and the KV cache of its sequences. How fast it
reads them depends on where the pages are (``R`` resident bytes per socket, a tier of ``C`` bytes and bandwidth
``B_t``, DRAM of ``D`` bytes and ``B_d``):

- ``before-dram`` (HBM in flat mode, the process's pages placed there first: ``numactl --preferred``): a share
  ``f = min(1, C / R)`` of the bytes is in the tier, the rest spills to DRAM. Pages are placed in the order the
  process first touches them (layer by layer), so a step reads the tier's layers, then DRAM's, one after the other:
  ``t = f R / B_t + (1 - f) R / B_d``;
- ``after-dram`` (CXL memory, a NUMA node without cores that takes what DRAM cannot hold): ``f = min(1, D / R)`` in
  DRAM, the rest in the tier, read one after the other likewise;
- ``cache`` (HBM in cache mode, a direct-mapped memory-side cache in front of DRAM): a step sweeps its ``R`` bytes
  in the same order every time; with ``R <= C`` every line stays, with ``C < R < 2 C`` the ``2 C - R`` bytes whose
  cache sets hold one line of the sweep stay and the others evict each other, from ``R >= 2 C`` none stays:
  ``h = min(1, max(0, (2 C - R) / R))`` of the bytes from the tier, the rest from DRAM (the fills into the tier
  are not counted: they use its write bandwidth beside the reads);
- ``interleave`` (``numactl --interleave``, or Linux's weighted interleave: page by page, a share ``w`` of the pages
  on the tier, ``w_tier / sum of the weights``): every stretch of a tensor is on both, so the two are read at once
  and the slower one's share bounds the stream, ``t = max(w R / B_t, (1 - w) R / B_d)``.

The first three are read one after the other: ``B = 1 / (s / B_t + (1 - s) / B_d)`` for the share ``s`` from the
tier; the interleaved pages at once, ``B = 1 / max(s / B_t, (1 - s) / B_d)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

#: a tier's ``use`` (:class:`roofline.spec.vocab.TierUse`, whose members equal these words)
BEFORE_DRAM, AFTER_DRAM, CACHE, INTERLEAVE = "before-dram", "after-dram", "cache", "interleave"


def _f(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=float)


def tier_share(use: str, resident: ArrayLike, tier_bytes: float, dram_bytes: float,
               interleave: float | None = None) -> np.ndarray:
    """The share of a step's resident bytes it reads from the tier (module docstring); ``interleave``: the share of
    the pages an interleaved placement puts on the tier."""
    r = np.maximum(_f(resident), 1.0)
    if use == INTERLEAVE:
        if interleave is None or not 0.0 < interleave < 1.0:
            raise ValueError(f"interleave: the tier's share of the pages, between 0 and 1, got {interleave!r}")
        return np.full_like(r, interleave)
    if use == BEFORE_DRAM:
        return np.minimum(1.0, tier_bytes / r)
    if use == AFTER_DRAM:
        return 1.0 - np.minimum(1.0, dram_bytes / r)
    if use != CACHE:
        raise ValueError(f"use: {BEFORE_DRAM}, {AFTER_DRAM}, {CACHE} or {INTERLEAVE}, got {use!r}")
    return np.clip((2.0 * tier_bytes - r) / r, 0.0, 1.0)


def blended_bandwidth(share: ArrayLike, tier_bps: ArrayLike, dram_bps: ArrayLike, at_once: bool = False
                      ) -> np.ndarray:
    """The bytes per second of a stream read ``s`` from the tier, the rest from DRAM: one after the other,
    ``1 / (s / B_t + (1 - s) / B_d)``; both at once (``at_once``: interleaved pages), ``1 / max(s / B_t,
    (1 - s) / B_d)``."""
    s = _f(share)
    a, b = s / _f(tier_bps), (1.0 - s) / _f(dram_bps)
    return 1.0 / (np.maximum(a, b) if at_once else a + b)
