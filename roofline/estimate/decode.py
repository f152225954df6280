"""Decode: per-token latency, tokens/s, what bounds a step, and the batch where it turns compute-bound."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from roofline.calc.gemm_roofline import gemm_roofline
from roofline.calc.shapes import GemmList
from roofline.estimate.grid import GridEval, cell_inputs
from roofline.spec.platform import Platform

#: batches searched for the compute-bound turn: 1 .. 2**16
BATCH_SWEEP = np.arange(1, 2**16 + 1)


@dataclass(frozen=True)
class StepSplit:
    """Roofline time of one step, split by what bounds each part."""

    compute_s: float
    """time of the ops that are compute-bound"""
    weights_s: float
    """time of the GEMMs that are memory-bound (streaming weights)"""
    kv_cache_s: float
    """time of attention when it is memory-bound (reading the KV cache)"""
    other_memory_s: float
    """time of the other memory-bound non-GEMM ops"""

    @property
    def total_s(self) -> float:
        return self.compute_s + self.weights_s + self.kv_cache_s + self.other_memory_s

    @property
    def bound(self) -> str:
        return "compute" if self.compute_s >= self.total_s - self.compute_s else "memory"

    def detail(self) -> str:
        t = self.total_s
        parts = [("compute", self.compute_s), ("weights", self.weights_s), ("kv-cache", self.kv_cache_s),
                 ("activations", self.other_memory_s)]
        return ", ".join(f"{name} {100 * v / t:.0f}%" for name, v in parts if v > 0.005 * t)


def step_split(ev: GridEval, i: int, gemms: GemmList, op_t_compute: np.ndarray, op_t_memory: np.ndarray,
               kv_mask: np.ndarray) -> StepSplit:
    """Precision row ``i``: GEMM times by their bound, non-GEMM op times by theirs."""
    g = ev.grid
    times = gemms.count * g.time[i]
    compute = float(times[g.compute_bound[i]].sum())
    weights = float(times[~g.compute_bound[i]].sum())
    op_time = np.maximum(op_t_compute, op_t_memory)
    op_mem = op_t_memory > op_t_compute
    compute += float(op_time[~op_mem].sum())
    kv = float(op_time[op_mem & kv_mask].sum())
    other = float(op_time[op_mem & ~kv_mask].sum())
    return StepSplit(compute, weights, kv, other)


def compute_bound_batch(platform: Platform, ev: GridEval, i: int, gemms: GemmList, *, sockets: int,
                        bandwidth: str) -> int | None:
    """The smallest batch at which the decode GEMMs of precision row ``i``, taken together, spend at
    least as long computing as streaming: ``sum_j t_compute,j >= sum_j t_memory,j``, all GEMMs at
    ``M = batch``. None when no batch up to 65536 gets there. (Attention over the KV cache grows with
    the batch too and never turns compute-bound; it is not part of this figure.)"""
    m = np.broadcast_to(BATCH_SWEEP[:, None], (len(BATCH_SWEEP), len(gemms))).astype(float)
    c = cell_inputs(platform, ev.cell_recipes[i], m, gemms.n, gemms.k, sockets)
    b_mem = platform.dram_bytes_per_s(sockets, bandwidth)
    b_llc = platform.llc_bytes_per_s(sockets)
    g = gemm_roofline(m, gemms.n, gemms.k, c.e_x, c.e_w, c.e_y, c.peak, b_mem,
                      b_llc if b_llc is not None else b_mem, bool(ev.resident[i]), x_meta=c.x_meta, w_meta=c.w_meta,
                      extra_ops=c.extra, extra_peak=ev.vector_peak)
    t_compute = (gemms.count * (g.flops / c.peak + c.extra / ev.vector_peak)).sum(axis=1)
    t_memory = (gemms.count * g.nbytes / g.bandwidth).sum(axis=1)
    hits = np.nonzero(t_compute >= t_memory)[0]
    return int(BATCH_SWEEP[hits[0]]) if hits.size else None
