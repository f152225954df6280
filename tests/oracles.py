"""The reference paper's formulas, written out on their own: oracles the tests check the step
evaluator against (the tool itself prices every GEMM through :mod:`roofline.model.step`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from roofline.calc.gemm import arithmetic_intensity, gemm_flops, gemm_times, operand_bytes
from roofline.calc.roofline import attainable, balance_point


def effective_bandwidth(d_x: ArrayLike, d_w: ArrayLike, d_y: ArrayLike, b_mem: ArrayLike, b_llc: ArrayLike) -> np.ndarray:
    """Bandwidth seen by a GEMM whose weights stream from the LLC while X and Y go to DRAM:

    ``B_eff = (D_X + D_W + D_Y) / (D_X / B_mem + D_W / B_LLC + D_Y / B_mem)``

    a byte-weighted harmonic mean, so ``B_mem <= B_eff <= B_LLC`` whenever ``B_mem <= B_LLC``.
    """
    d_x, d_w, d_y = (np.asarray(a, dtype=float) for a in (d_x, d_w, d_y))
    b_mem, b_llc = np.asarray(b_mem, dtype=float), np.asarray(b_llc, dtype=float)
    return (d_x + d_w + d_y) / ((d_x + d_y) / b_mem + d_w / b_llc)


class GemmRoofline(NamedTuple):
    flops: np.ndarray  # F = 2MNK, one call
    d_x: np.ndarray  # bytes, one call
    d_w: np.ndarray
    d_y: np.ndarray
    nbytes: np.ndarray  # D = D_X + D_W + D_Y
    ai: np.ndarray  # ops/byte
    bandwidth: np.ndarray  # B_i: B_mem, or B_eff when the weights are LLC-resident
    balance_point: np.ndarray  # BP_i = P / B_i
    compute_bound: np.ndarray  # t_compute >= t_memory (AI_i >= BP_i without extra ops)
    attainable: np.ndarray  # P_i = F / max(t_compute, t_memory) = min(P, AI_i B_i) without extra ops
    time: np.ndarray  # seconds for one call: F / P_i
    t_compute: np.ndarray  # F / P + E / P_extra
    t_memory: np.ndarray  # D / B_i


def gemm_roofline(
    m: ArrayLike,
    n: ArrayLike,
    k: ArrayLike,
    e_x: ArrayLike,
    e_w: ArrayLike,
    e_y: ArrayLike,
    peak: ArrayLike,
    b_mem: ArrayLike,
    b_llc: ArrayLike | None = None,
    resident: ArrayLike = False,
    x_meta: ArrayLike = 0.0,
    w_meta: ArrayLike = 0.0,
    extra_ops: ArrayLike = 0.0,
    extra_peak: ArrayLike = np.inf,
) -> GemmRoofline:
    """The reference paper's roofline of ``Y[M,N] = X[M,K] . W[N,K]^T`` for every broadcast combination of
    the inputs: X and Y from DRAM, the weights from the LLC where ``resident``.

    ``B_i = B_eff,i`` where ``resident`` (weights stream from the LLC at ``b_llc``), else ``B_mem``.
    ``t_compute = F / P + E / P_extra`` (``E``: extra work a kernel does besides the MACs, such as
    dequantizing weights, on the path with peak ``P_extra``), ``t_memory = D / B_i``;
    ``P_i = F / max(t_compute, t_memory)``, compute-bound iff ``t_compute >= t_memory``.
    Without extra work this is ``P_i = min(P, AI_i B_i)``, compute-bound iff ``AI_i >= P / B_i``.
    """
    flops = gemm_flops(m, n, k)
    d_x, d_w, d_y = operand_bytes(m, n, k, e_x, e_w, e_y, x_meta, w_meta)
    nbytes = d_x + d_w + d_y
    ai = arithmetic_intensity(flops, nbytes)
    b_mem = np.asarray(b_mem, dtype=float)
    bw = b_mem if b_llc is None else np.where(resident, effective_bandwidth(d_x, d_w, d_y, b_mem, b_llc), b_mem)
    peak = np.asarray(peak, dtype=float)
    extra = np.asarray(extra_ops, dtype=float)
    t_compute, t_memory, _, _ = gemm_times(flops, d_x, d_w, d_y, peak, np.where(resident, b_llc, b_mem)
                                           if b_llc is not None else b_mem, b_mem, extra, extra_peak)
    if not np.any(extra):
        bp = balance_point(peak, bw)
        p_i = attainable(peak, ai, bw)
        bound = ai >= bp
    else:
        p_i = flops / np.maximum(t_compute, t_memory)
        bp = balance_point(flops / t_compute, bw)  # the kernel's effective peak over B_i
        bound = t_compute >= t_memory
    shape = np.broadcast_shapes(np.shape(ai), np.shape(bw), np.shape(p_i), np.shape(bp), np.shape(t_memory))
    b = lambda a: np.broadcast_to(a, shape)  # noqa: E731
    return GemmRoofline(
        flops=b(flops), d_x=b(d_x), d_w=b(d_w), d_y=b(d_y), nbytes=b(nbytes), ai=b(ai), bandwidth=b(bw),
        balance_point=b(bp), compute_bound=b(bound), attainable=b(p_i), time=b(flops / p_i),
        t_compute=b(t_compute), t_memory=b(t_memory),
    )
