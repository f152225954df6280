"""Closed forms of single-queue waiting times: the oracles the simulation is tested against.

Notation: Poisson arrivals at rate ``lam`` (1/s); ``c`` identical servers; exponential service at
rate ``mu`` per server (M/M/c) or a deterministic service time ``d`` (M/D/1); FCFS, one queue.
``W`` is the waiting time in the queue, ``T = W + S`` the latency (waiting plus service).

- **Erlang C** (M/M/c), offered load ``a = lam / mu`` Erlangs, ``rho = a / c < 1``:
  ``C(c, a) = P(W > 0) = c B / (c - a (1 - B))`` with Erlang B from the stable recursion
  ``B_0 = 1, B_k = a B_{k-1} / (k + a B_{k-1})``;
  ``E[W] = C / (c mu - lam)``; ``P(W > t) = C e^{-(c mu - lam) t}``, so
  ``W_p = max(0, ln(C / (1 - p)) / (c mu - lam))``.
  The latency ``T = W + S`` with ``S ~ Exp(mu)`` independent of ``W``:
  ``P(T > t) = (1 - C) e^{-mu t} + C (theta e^{-mu t} - mu e^{-theta t}) / (theta - mu)``,
  ``theta = c mu - lam`` (the limit ``(1 + mu t) e^{-mu t}`` when ``theta = mu``).
- **M/D/1**, ``rho = lam d``: Pollaczek-Khinchine ``E[W] = rho d / (2 (1 - rho))``; the exact
  distribution (Erlang, 1909)
  ``P(W <= t) = (1 - rho) sum_{k=0}^{floor(t/d)} [lam (k d - t)]^k / k! e^{-lam (k d - t)}``.
  Its terms alternate in sign and grow like ``e^{lam t}``, so beyond ``lam t > MD1_EXACT_LIMIT``
  the tail switches to the Cramer-Lundberg asymptote ``P(W > t) ~ K e^{-theta t}``, ``theta > 0``
  the root of ``lam (e^{theta d} - 1) = theta`` and ``K = (1 - rho) / (lam d e^{theta d} - 1)``,
  whose relative error decays faster than ``e^{-theta t}``. At the switch the sum's rounding error
  is about ``e^{lam t}`` ulps (1e-12) and the two agree within 1e-8 absolute for every ``rho``;
  a test holds them to it.
- **M/G/c, approximate** (Allen-Cunneen; Kingman's formula is its ``c = 1`` case):
  ``E[W] ~ C(c, a) / (c mu - lam) x (c_a^2 + c_s^2) / 2`` with ``c_s^2 = Var S / E[S]^2`` and
  ``c_a^2 = 1`` for Poisson arrivals; its quantile assumes ``W`` given ``W > 0`` is exponential
  with the same mean (exact for M/M/c; an approximation otherwise).

All functions broadcast their array arguments and return float arrays; unstable inputs
(``rho >= 1``) give ``inf``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: above this ``lam t`` the M/D/1 waiting-time tail uses the Cramer-Lundberg asymptote
MD1_EXACT_LIMIT = 8.0


def erlang_c(c: ArrayLike, a: ArrayLike) -> np.ndarray:
    """``C(c, a)``: the probability that an arrival waits in M/M/c at offered load ``a = lam / mu``.

    Erlang B by the recursion ``B_k = a B_{k-1} / (k + a B_{k-1})``, then
    ``C = c B_c / (c - a (1 - B_c))``; 1 when ``a >= c`` (every arrival waits).
    """
    c, a = np.broadcast_arrays(np.asarray(c), np.asarray(a, dtype=float))
    ci = np.asarray(c, dtype=np.int64)
    b = np.ones(ci.shape)
    for k in range(1, int(ci.max(initial=0)) + 1):
        step = a * b / (k + a * b)
        b = np.where(k <= ci, step, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = ci * b / (ci - a * (1.0 - b))
    return np.where(a >= ci, 1.0, out)


def mmc_wait_mean(lam: ArrayLike, mu: ArrayLike, c: ArrayLike) -> np.ndarray:
    """``E[W] = C(c, a) / (c mu - lam)`` for M/M/c (``inf`` when ``lam >= c mu``)."""
    lam, mu, c = (np.asarray(x, dtype=float) for x in (lam, mu, c))
    gap = c * mu - lam
    with np.errstate(divide="ignore"):
        return np.where(gap > 0, erlang_c(c, lam / mu) / np.where(gap > 0, gap, 1.0), np.inf)


def mmc_wait_quantile(p: ArrayLike, lam: ArrayLike, mu: ArrayLike, c: ArrayLike) -> np.ndarray:
    """``W_p = max(0, ln(C / (1 - p)) / (c mu - lam))`` for M/M/c."""
    p, lam, mu, c = (np.asarray(x, dtype=float) for x in (p, lam, mu, c))
    gap = c * mu - lam
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.log(erlang_c(c, lam / mu) / (1.0 - p)) / gap
    return np.where(gap > 0, np.maximum(w, 0.0), np.inf)


def mmc_latency_tail(t: ArrayLike, lam: ArrayLike, mu: ArrayLike, c: ArrayLike) -> np.ndarray:
    """``P(T > t)`` for the M/M/c latency ``T = W + S`` (see the module docstring)."""
    t, lam, mu, c = (np.asarray(x, dtype=float) for x in (t, lam, mu, c))
    C = erlang_c(c, lam / mu)
    theta = c * mu - lam
    close = np.abs(theta - mu) <= 1e-9 * mu
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        hypo = (theta * np.exp(-mu * t) - mu * np.exp(-theta * t)) / (theta - mu)
    hypo = np.where(close, (1.0 + mu * t) * np.exp(-mu * t), hypo)
    return (1.0 - C) * np.exp(-mu * t) + C * hypo


def mmc_latency_quantile(p: ArrayLike, lam: ArrayLike, mu: ArrayLike, c: ArrayLike) -> np.ndarray:
    """``T_p``: the root of ``P(T > t) = 1 - p`` for M/M/c, by bisection (``P(T > t)`` falls in ``t``)."""
    p, lam, mu, c = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (p, lam, mu, c)))
    q = 1.0 - p
    stable = c * mu > lam
    # T > t needs W > t/2 or S > t/2: an upper bracket from the two quantiles at q/2
    hi = 2.0 * (mmc_wait_quantile(1.0 - q / 2, lam, mu, c) + np.log(2.0 / q) / mu)
    hi = np.where(stable, hi, 1.0)
    lo = np.zeros_like(hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        above = mmc_latency_tail(mid, lam, mu, c) > q
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return np.where(stable, 0.5 * (lo + hi), np.inf)


def md1_wait_mean(lam: ArrayLike, d: ArrayLike) -> np.ndarray:
    """Pollaczek-Khinchine for M/D/1: ``E[W] = rho d / (2 (1 - rho))``, ``rho = lam d``."""
    lam, d = np.asarray(lam, dtype=float), np.asarray(d, dtype=float)
    rho = lam * d
    return np.where(rho < 1, rho * d / (2.0 * (1.0 - np.where(rho < 1, rho, 0.0))), np.inf)


def md1_decay_rate(lam: ArrayLike, d: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(theta, K)`` of the M/D/1 tail ``P(W > t) ~ K e^{-theta t}``.

    ``theta > 0`` solves ``lam (e^{theta d} - 1) = theta`` (bisection: the left side minus ``theta``
    is convex, 0 at 0, negative just above 0 when ``rho < 1``, positive beyond
    ``2 (1 - rho) / (rho d)``); ``K = (1 - rho) / (lam d e^{theta d} - 1)``.
    """
    lam, d = np.broadcast_arrays(np.asarray(lam, dtype=float), np.asarray(d, dtype=float))
    rho = lam * d
    lo = np.zeros_like(rho)
    hi = 2.0 * (1.0 - rho) / (rho * d)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        pos = lam * np.expm1(mid * d) > mid
        lo, hi = np.where(pos, lo, mid), np.where(pos, mid, hi)
    theta = 0.5 * (lo + hi)
    k = (1.0 - rho) / (lam * d * np.exp(theta * d) - 1.0)
    return theta, k


def md1_wait_tail(t: ArrayLike, lam: ArrayLike, d: ArrayLike,
                  decay: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """``P(W > t)`` for M/D/1: Erlang's exact sum while ``lam t <= MD1_EXACT_LIMIT``, else the asymptote
    (``decay``: :func:`md1_decay_rate` of ``lam, d`` when the caller has it; solved here only where needed)."""
    t, lam, d = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (t, lam, d)))
    rho = lam * d
    exact_region = lam * t <= MD1_EXACT_LIMIT
    te = np.where(exact_region, t, 0.0)
    total = np.zeros(t.shape)
    kmax = int(np.floor(np.max(te / d, initial=0.0)))
    log_fact = 0.0  # ln k!
    for k in range(kmax + 1):
        log_fact += np.log(k) if k else 0.0
        x = lam * (te - k * d)  # >= 0 where the term is in the sum
        inside = (k * d <= te) & exact_region
        xs = np.where(inside, x, 1.0)
        mag = np.exp(k * np.log(np.where(xs > 0, xs, 1.0)) - log_fact + xs) if k else np.exp(xs)
        mag = np.where((xs == 0) & (k > 0), 0.0, mag)
        total = total + np.where(inside, (-1.0) ** k * mag, 0.0)
    exact = 1.0 - (1.0 - rho) * total
    if decay is None and np.all(exact_region):
        asym = np.zeros(t.shape)  # the asymptote is nowhere used
    else:
        theta, kk = decay if decay is not None else md1_decay_rate(lam, d)
        asym = kk * np.exp(-theta * t)
    out = np.where(exact_region, exact, asym)
    out = np.where(t < 0, 1.0, out)
    return np.where(rho < 1, np.clip(out, 0.0, 1.0), 1.0)


def md1_wait_quantile(p: ArrayLike, lam: ArrayLike, d: ArrayLike) -> np.ndarray:
    """``W_p`` for M/D/1: the smallest ``t`` with ``P(W > t) <= 1 - p`` (bisection; 0 if ``p <= 1 - rho``)."""
    p, lam, d = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (p, lam, d)))
    q = 1.0 - p
    rho = lam * d
    stable = rho < 1
    theta, kk = md1_decay_rate(np.where(stable, lam, 0.5 / d), d)
    hi = np.maximum(np.log(np.maximum(kk, q) / q) / theta, d) * 4.0 + 4.0 * d
    lo = np.zeros_like(hi)
    decay = md1_decay_rate(lam, d)  # the tail's asymptote, solved once for the whole bisection
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        above = md1_wait_tail(mid, lam, d, decay) > q
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return np.where(stable, np.where(q >= rho, 0.0, hi), np.inf)


def allen_cunneen_wait_mean(lam: ArrayLike, mean_s: ArrayLike, cs2: ArrayLike, c: ArrayLike,
                            ca2: ArrayLike = 1.0) -> np.ndarray:
    """M/G/c (G/G/c) approximation ``E[W] ~ C(c, lam E[S]) / (c / E[S] - lam) x (c_a^2 + c_s^2) / 2``."""
    lam, mean_s, cs2, c, ca2 = (np.asarray(x, dtype=float) for x in (lam, mean_s, cs2, c, ca2))
    return mmc_wait_mean(lam, 1.0 / mean_s, c) * (ca2 + cs2) / 2.0


def allen_cunneen_wait_quantile(p: ArrayLike, lam: ArrayLike, mean_s: ArrayLike, cs2: ArrayLike, c: ArrayLike,
                                ca2: ArrayLike = 1.0) -> np.ndarray:
    """``W_p ~ max(0, m ln(C / (1 - p)))``, ``m = E[W] / C`` the Allen-Cunneen mean wait of those who wait.

    Exact for M/M/c; for other service distributions the exponential conditional wait is an assumption.
    """
    p, lam, mean_s, cs2, c, ca2 = (np.asarray(x, dtype=float) for x in (p, lam, mean_s, cs2, c, ca2))
    C = erlang_c(c, lam * mean_s)
    m = allen_cunneen_wait_mean(lam, mean_s, cs2, c, ca2) / C
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(m), np.maximum(m * np.log(C / (1.0 - p)), 0.0), np.inf)
