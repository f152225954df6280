"""Aggregates: throughput over a mix of GEMM shapes, and the geometric mean of ratios."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def aggregate_throughput(counts: ArrayLike, flops: ArrayLike, per_shape: ArrayLike, axis: int = -1) -> np.ndarray:
    """``P_agg = sum_i c_i F_i / sum_i (c_i F_i / P_i)``: total work over total time.

    A work-weighted harmonic mean of the per-shape throughputs ``P_i``, so it lies
    between the slowest and the fastest shape.
    """
    work = np.asarray(counts, dtype=float) * np.asarray(flops, dtype=float)
    work = np.broadcast_to(work, np.broadcast_shapes(work.shape, np.shape(per_shape)))
    return work.sum(axis=axis) / (work / np.asarray(per_shape, dtype=float)).sum(axis=axis)


def geometric_mean(values: ArrayLike) -> float:
    """``exp(sum_i log v_i / n)``: the mean of ratios (efficiencies, platform factors) on their own scale."""
    return float(np.exp(np.mean(np.log(np.asarray(values, dtype=float)))))
