"""Confidence intervals of simulation outputs from independent replications.

A simulated statistic (a mean, a p99) is computed once per replication; the replications use
independent random streams, so their values are i.i.d. and the 95% interval on their mean is
``xbar +- t_{0.975, R-1} s / sqrt(R)`` (Student's t; ``s`` the sample standard deviation over the
``R`` replications). For a quantile the point estimate is the quantile of all replications'
samples pooled, and the same half-width is put around it: the pooled estimate has no more
variance than the mean of the per-replication estimates, so the interval is, if anything, wide.
The interval covers sampling error only, not the bias left by a finite warm-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: two-sided 95%: Student's t quantile t_{0.975, df} for df = 1..30 (standard tables)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)
_Z975 = 1.959963984540054


def t975(df: int) -> float:
    """``t_{0.975, df}``: the table for ``df <= 30``, else the Cornish-Fisher expansion
    ``z + (z^3 + z) / (4 df) + (5 z^5 + 16 z^3 + 3 z) / (96 df^2)`` (error < 1e-4 there)."""
    if df < 1:
        return float("inf")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def replication_half_width(per_rep: ArrayLike) -> np.ndarray:
    """Half-width of the 95% interval on the mean of the last axis (replications): ``t s / sqrt(R)``.

    ``inf`` with fewer than two replications; ``inf`` where any replication is not finite.
    """
    x = np.asarray(per_rep, dtype=float)
    r = x.shape[-1]
    if r < 2:
        return np.full(x.shape[:-1], np.inf)
    with np.errstate(invalid="ignore"):
        s = x.std(axis=-1, ddof=1)
    return np.where(np.isfinite(s), t975(r - 1) * s / np.sqrt(r), np.inf)
