"""The roofline: peak, balance point, attainable throughput, bound."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def compute_peak(sockets: ArrayLike, cores_per_socket: ArrayLike, freq_hz: ArrayLike, ops_per_cycle: ArrayLike) -> np.ndarray:
    """``P = sockets x cores x f_allcore(path) x ops_per_cycle(path)`` in ops/s."""
    return (
        np.asarray(sockets, dtype=float)
        * np.asarray(cores_per_socket, dtype=float)
        * np.asarray(freq_hz, dtype=float)
        * np.asarray(ops_per_cycle, dtype=float)
    )


def balance_point(peak: ArrayLike, bandwidth: ArrayLike) -> np.ndarray:
    """``BP = P / B``: the arithmetic intensity (ops/byte) where a kernel stops being memory-bound."""
    return np.asarray(peak, dtype=float) / np.asarray(bandwidth, dtype=float)


def attainable(peak: ArrayLike, ai: ArrayLike, bandwidth: ArrayLike) -> np.ndarray:
    """``P_i = min(P, AI_i x B_i)`` in ops/s."""
    return np.minimum(np.asarray(peak, dtype=float), np.asarray(ai, dtype=float) * np.asarray(bandwidth, dtype=float))


def compute_bound(ai: ArrayLike, peak: ArrayLike, bandwidth: ArrayLike) -> np.ndarray:
    """Compute-bound when ``AI_i >= BP_i = P / B_i`` (the balance point itself counts as compute-bound)."""
    return np.asarray(ai, dtype=float) >= balance_point(peak, bandwidth)
