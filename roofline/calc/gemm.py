"""Flops, bytes and arithmetic intensity of ``Y[M,N] = X[M,K] . W[N,K]^T``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def gemm_flops(m: ArrayLike, n: ArrayLike, k: ArrayLike) -> np.ndarray:
    """``F = 2 M N K``: one multiply and one add per multiply-accumulate."""
    return 2.0 * np.asarray(m, dtype=float) * np.asarray(n, dtype=float) * np.asarray(k, dtype=float)


def weight_meta_bytes(
    n: ArrayLike, k: ArrayLike, scheme: str, group_size: int | None, scale_bytes: float, zero_point: bool
) -> np.ndarray:
    """Bytes of the weight's quantization metadata, read with W.

    - ``none``:        0
    - ``per-channel``: ``N e_s`` (one scale per output channel; a zero point adds ``N e_s``)
    - ``per-group``:   ``N ceil(K/g) (e_s + e_z)`` with ``e_z = e_s`` when zero points are used
    """
    n = np.asarray(n, dtype=float)
    per_entry = scale_bytes * (2.0 if zero_point else 1.0)
    if scheme == "none":
        return np.zeros_like(n)
    if scheme == "per-channel":
        return n * per_entry
    if scheme == "per-group":
        if not group_size:
            raise ValueError("per-group weight scales need a group size")
        return n * np.ceil(np.asarray(k, dtype=float) / group_size) * per_entry
    raise ValueError(f"unknown weight scale scheme {scheme!r}")


def activation_meta_bytes(m: ArrayLike, scheme: str, scale_bytes: float) -> np.ndarray:
    """Bytes of the activation's scales: ``M e_s`` per token, ``e_s`` per tensor, else 0."""
    m = np.asarray(m, dtype=float)
    if scheme == "per-token":
        return m * scale_bytes
    if scheme == "per-tensor":
        return np.full_like(m, scale_bytes)
    return np.zeros_like(m)


def operand_bytes(
    m: ArrayLike,
    n: ArrayLike,
    k: ArrayLike,
    e_x: ArrayLike,
    e_w: ArrayLike,
    e_y: ArrayLike,
    x_meta: ArrayLike = 0.0,
    w_meta: ArrayLike = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bytes each operand moves when read or written once.

    ``D_X = e_x M K + meta_X``,  ``D_W = e_w N K + meta_W``,  ``D_Y = e_y M N``
    (the paper's ``E_in`` is ``e_x = e_w``, its ``E_out`` is ``e_y``).
    """
    m, n, k = (np.asarray(a, dtype=float) for a in (m, n, k))
    d_x = np.asarray(e_x, dtype=float) * m * k + x_meta
    d_w = np.asarray(e_w, dtype=float) * n * k + w_meta
    d_y = np.asarray(e_y, dtype=float) * m * n
    return d_x, d_w, d_y


def arithmetic_intensity(flops: ArrayLike, nbytes: ArrayLike) -> np.ndarray:
    """``AI = F / D`` in ops per byte, with ``D = D_X + D_W + D_Y``.

    For plain operands this is ``2MNK / (e_x M K + e_w N K + e_y M N)``.
    """
    return np.asarray(flops, dtype=float) / np.asarray(nbytes, dtype=float)


def unpack_ops(n: ArrayLike, k: ArrayLike, dequant_per_weight: ArrayLike) -> np.ndarray:
    """Vector work to unpack an ``N x K`` weight matrix once: ``U = d N K`` (``d`` ops per weight element)."""
    return np.asarray(dequant_per_weight, dtype=float) * np.asarray(n, dtype=float) * np.asarray(k, dtype=float)


def kernel_extra_ops(
    m: ArrayLike, n: ArrayLike, k: ArrayLike, dequant_per_weight: float, activation_sum: bool,
    group_size: int | None, integer_compute: bool,
) -> np.ndarray:
    """Vector work a quantized kernel does besides the multiply-accumulates, per call.

    ``E = d N K`` (dequantize/unpack every weight element, ``d`` ops each: :func:`unpack_ops`)
    ``+ M K`` when the kernel sums activation rows (the compensation of unsigned-offset INT4)
    ``+ 2 M N ceil(K/g)`` when an integer GEMM rescales per group of ``g`` along K.
    """
    m, n, k = (np.asarray(a, dtype=float) for a in (m, n, k))
    extra = unpack_ops(n, k, dequant_per_weight)
    if activation_sum:
        extra = extra + m * k
    if integer_compute and group_size:
        extra = extra + 2.0 * m * n * np.ceil(k / group_size)
    return np.asarray(extra, dtype=float)


def gemm_times(flops: ArrayLike, d_x: ArrayLike, d_w: ArrayLike, d_y: ArrayLike, peak: ArrayLike, b_w: ArrayLike,
               b_xy: ArrayLike, extra_ops: ArrayLike = 0.0, extra_peak: ArrayLike = np.inf
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(t_compute, t_memory, t_w, t_xy)`` of one GEMM call, every input broadcast:

    ``t_compute = F / P + E / P_extra`` (``E``: extra work besides the MACs, e.g. dequantizing weights,
    on the path with peak ``P_extra``); ``t_w = D_W / B_W``, ``t_xy = (D_X + D_Y) / B_XY`` with each
    operand class at the bandwidth of the level it is read from; ``t_memory = t_w + t_xy``.
    The call takes ``max(t_compute, t_memory)``.
    """
    t_compute = np.asarray(flops, dtype=float) / np.asarray(peak, dtype=float)
    if np.any(extra_ops):
        t_compute = t_compute + np.asarray(extra_ops, dtype=float) / np.asarray(extra_peak, dtype=float)
    t_w = np.asarray(d_w, dtype=float) / np.asarray(b_w, dtype=float)
    t_xy = (np.asarray(d_x, dtype=float) + np.asarray(d_y, dtype=float)) / np.asarray(b_xy, dtype=float)
    return t_compute, t_w + t_xy, t_w, t_xy
