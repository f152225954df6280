"""How much the serving simulations simulate, their random streams, and how sure their answers are.

:class:`Sampling` sizes the runs. :func:`streams` draws, per replication, one unit-rate Poisson
arrival stream and one length stream shared by every scenario and rate (common random numbers).

A simulated statistic (a mean, a p99) is computed once per replication; the replications use
independent random streams, so their values are i.i.d. and the 95% interval on their mean is
``xbar +- t_{0.975, R-1} s / sqrt(R)`` (Student's t; ``s`` the sample standard deviation over the
``R`` replications). For a quantile the point estimate is the quantile of all replications'
samples pooled, and the same half-width is put around it: the pooled estimate has no more
variance than the mean of the per-replication estimates, so the interval is, if anything, wide.
The interval covers sampling error only, not the bias left by a finite warm-up (largest near
saturation: see :class:`Sampling`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from roofline.errors import UserError
from roofline.serving.checks import positive, whole
from roofline.serving.request_lengths import RequestLengths

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


@dataclass(frozen=True)
class Sampling:
    """How much to simulate, per (scenario, offered rate).

    Each of ``replications`` independent replications (seeds spawned from ``seed``) simulates,
    from an empty system, a warm-up it discards, the requests it measures, and a short tail (so that
    the batches of the last measured requests can fill). The measured requests are at least
    ``requests`` and at least ``cycles`` full-batch service times of simulated time; the warm-up
    at least ``warmup`` requests and ``warmup_cycles`` full-batch times; each at most
    ``max_requests``. Sizing by time matters for servers with many instances: ``c`` instances
    serving batches of ``B`` take ``c B`` requests per full-batch time at capacity, so a fixed
    request count would cover only a few service times of a 256-instance server.

    The system starts empty, so near saturation (relaxation times grow like ``1 / (1 - rho)^2``)
    a finite run underestimates the steady-state p99 by more than its interval says: at 99% load
    an M/D/1 run of the default size gives about a third of the true p99. Loads where an SLO binds
    are rarely that close to capacity, and the rate found there moves little.
    """

    requests: int = 2000
    warmup: int = 500
    cycles: float = 10.0
    warmup_cycles: float = 3.0
    max_requests: int = 50_000
    replications: int = 8
    seed: int = 0

    def __post_init__(self) -> None:
        whole("requests", self.requests, 10)
        whole("warmup", self.warmup, 0)
        positive("cycles", self.cycles, allow_zero=True)
        positive("warmup_cycles", self.warmup_cycles, allow_zero=True)
        if whole("max_requests", self.max_requests, 10) < self.requests:
            raise UserError(f"max_requests={self.max_requests}: must be at least requests={self.requests}")
        whole("replications", self.replications, 1)
        whole("seed", self.seed, 0)

    def rows(self, per_cycle: np.ndarray, most_per_batch: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(measured, warm-up, tail) requests for rows where ``per_cycle`` requests arrive per full-batch time."""
        meas = np.minimum(np.maximum(self.requests, np.ceil(self.cycles * per_cycle)), self.max_requests)
        warm = np.minimum(np.maximum(self.warmup, np.ceil(self.warmup_cycles * per_cycle)), self.max_requests)
        tail = np.minimum(most_per_batch + 1, np.maximum(meas // 10, 1))
        return meas.astype(np.int64), warm.astype(np.int64), tail.astype(np.int64)


def streams(lengths: RequestLengths, replications: int, total: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit-rate arrival times ``U`` and lengths ``L``, shape (replications, total). Replication
    ``r`` draws its arrivals and its lengths from two generators of its own (spawned from
    ``seed``), so its first ``n`` requests are the same whatever ``total`` and whatever the number
    of scenarios or rates: rows that need fewer requests use a prefix."""
    u = np.empty((replications, total))
    ln = np.empty((replications, total), dtype=np.int64)
    for r, sq in enumerate(np.random.SeedSequence(seed).spawn(replications)):
        arrivals, sizes = (np.random.default_rng(s) for s in sq.spawn(2))
        u[r] = np.cumsum(arrivals.exponential(1.0, total))
        ln[r] = lengths.sample(sizes, total)
    return u, ln


def quantiles(x: np.ndarray, ps: tuple[float, ...]) -> list[float]:
    """Quantiles with linear interpolation between order statistics (numpy's default method)."""
    n = x.size
    pos = [p * (n - 1) for p in ps]
    ks = sorted({min(int(math.floor(q)), n - 1) for q in pos} | {min(int(math.floor(q)) + 1, n - 1) for q in pos})
    part = np.partition(x, ks)
    out = []
    for q in pos:
        lo = min(int(math.floor(q)), n - 1)
        hi = min(lo + 1, n - 1)
        out.append(float(part[lo] + (part[hi] - part[lo]) * (q - lo)))
    return out
