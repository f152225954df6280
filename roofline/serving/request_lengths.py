"""Request lengths in tokens: fixed, a discretised truncated lognormal, or a histogram.

Every shape is held the same way, as a probability mass function over whole token counts
(``support``, ``prob``), so sampling, the mean and the bounds need one code path:

- ``fixed_lengths(n)``: every request has ``n`` tokens.
- ``lognormal_lengths(mean, sigma=0.5, lo=1, hi=ceil(4 mean))``: ``X ~ LogNormal(m, sigma)``
  truncated to ``[lo - 1/2, hi + 1/2]`` and rounded to the nearest whole token,
  ``P(L = k) ~ Phi((ln(k + 1/2) - m) / sigma) - Phi((ln(k - 1/2) - m) / sigma)`` for
  ``k = lo..hi``. ``m`` is solved (bisection: the mean rises with ``m``) so that the mean of the
  *discretised, truncated* distribution equals ``mean`` to 1e-9 relative. ``sigma`` is the
  standard deviation of ``ln X`` (0.5: a coefficient of variation of about 0.53 before truncation).
- ``histogram_lengths(lengths, weights)``: the caller's histogram (for instance read from a file of
  ``length weight`` lines), normalised.

Bad values raise :class:`roofline.errors.UserError` naming the parameter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from roofline.errors import UserError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclass(frozen=True, eq=False)
class RequestLengths:
    """A distribution of request lengths: ``P(L = support[i]) = prob[i]``."""

    kind: str
    """``fixed``, ``lognormal`` or ``histogram``"""
    support: np.ndarray
    """whole token counts, increasing, >= 1"""
    prob: np.ndarray
    """probabilities, summing to 1"""
    description: str

    @property
    def mean(self) -> float:
        return float(self.support @ self.prob)

    @property
    def min(self) -> int:
        return int(self.support[0])

    @property
    def max(self) -> int:
        return int(self.support[-1])

    @property
    def is_fixed(self) -> bool:
        return self.support.size == 1

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent lengths (int64)."""
        if self.is_fixed:
            return np.full(n, self.support[0], dtype=np.int64)
        cdf = np.cumsum(self.prob)
        cdf[-1] = 1.0
        return self.support[np.searchsorted(cdf, rng.random(n), side="right").clip(0, self.support.size - 1)]


def _positive_int(name: str, value) -> int:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise UserError(f"{name}={value!r}: must be a positive whole number of tokens") from None
    if not (math.isfinite(v) and v >= 1 and v == int(v)):
        raise UserError(f"{name}={value!r}: must be a positive whole number of tokens")
    return int(v)


def fixed_lengths(seq_len: int) -> RequestLengths:
    """Every request is ``seq_len`` tokens."""
    n = _positive_int("seq_len", seq_len)
    return RequestLengths("fixed", np.array([n], dtype=np.int64), np.array([1.0]), f"fixed {n} tokens")


def _lognormal_pmf(m: float, sigma: float, ks: np.ndarray) -> np.ndarray:
    edges = np.log(np.concatenate([ks - 0.5, ks[-1:] + 0.5]).clip(1e-300))
    z = (edges - m) / (sigma * math.sqrt(2.0))
    cdf = 0.5 * (1.0 + np.array([math.erf(x) for x in z]))
    p = np.diff(cdf)
    if not p.sum() > 0:  # all mass outside [lo, hi]: the nearer bound gets it
        p = np.zeros(ks.size)
        p[0 if m < edges[0] else -1] = 1.0
    return p / p.sum()


def lognormal_lengths(mean: float, sigma: float = 0.5, lo: int = 1, hi: int | None = None) -> RequestLengths:
    """A truncated lognormal rounded to whole tokens whose mean is ``mean`` (see the module docstring)."""
    try:
        mean_f = float(mean)
    except (TypeError, ValueError):
        raise UserError(f"seq_len_mean={mean!r}: must be a positive number of tokens") from None
    if not (math.isfinite(mean_f) and mean_f >= 1):
        raise UserError(f"seq_len_mean={mean!r}: must be a number of tokens >= 1")
    if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma > 0):
        raise UserError(f"sigma={sigma!r}: the lognormal's log-space standard deviation must be positive")
    lo = _positive_int("lo", lo)
    hi = _positive_int("hi", math.ceil(4 * mean_f) if hi is None else hi)
    if not lo < mean_f < hi:
        raise UserError(f"seq_len_mean={mean_f:g}: must lie strictly between the bounds lo={lo} and hi={hi}")
    ks = np.arange(lo, hi + 1, dtype=np.int64)
    a, b = math.log(lo) - 8 * sigma, math.log(hi) + 8 * sigma
    for _ in range(200):
        m = 0.5 * (a + b)
        if ks @ _lognormal_pmf(m, sigma, ks) < mean_f:
            a = m
        else:
            b = m
        if b - a < 1e-13:
            break
    p = _lognormal_pmf(0.5 * (a + b), sigma, ks)
    keep = p > 0
    return RequestLengths("lognormal", ks[keep], p[keep],
                          f"lognormal mean {mean_f:g} tokens, sigma {sigma:g}, truncated to [{lo}, {hi}]")


def histogram_lengths(lengths: ArrayLike, weights: ArrayLike) -> RequestLengths:
    """The caller's histogram: ``P(L = lengths[i]) = weights[i] / sum(weights)`` (repeated lengths add up)."""
    ls = np.asarray(lengths, dtype=float).ravel()
    ws = np.asarray(weights, dtype=float).ravel()
    if ls.size == 0 or ls.size != ws.size:
        raise UserError(f"length histogram: {ls.size} length(s) and {ws.size} weight(s); give one weight per length")
    if not (np.all(np.isfinite(ls)) and np.all(ls >= 1) and np.all(ls == np.round(ls))):
        raise UserError("length histogram: lengths must be positive whole numbers of tokens")
    if not (np.all(np.isfinite(ws)) and np.all(ws >= 0) and ws.sum() > 0):
        raise UserError("length histogram: weights must be 0 or more, and not all 0")
    support, inv = np.unique(ls.astype(np.int64), return_inverse=True)
    prob = np.bincount(inv, weights=ws) / ws.sum()
    keep = prob > 0
    support, prob = support[keep], prob[keep]
    return RequestLengths("histogram", support, prob,
                          f"histogram of {support.size} lengths, mean {float(support @ prob):.4g} tokens")
