"""Decode: what bounds a step, and the batch where its GEMMs turn compute-bound."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from roofline.calc.shapes import GemmList
from roofline.model.resources import Resources
from roofline.model.step import COMPUTE, StepEval, evaluate_step
from roofline.spec.precision import PrecisionRecipe

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
    def bound(self) -> Literal["compute", "memory"]:
        return "compute" if self.compute_s >= self.total_s - self.compute_s else "memory"

    def detail(self) -> str:
        t = self.total_s
        parts = [("compute", self.compute_s), ("weights", self.weights_s), ("kv-cache", self.kv_cache_s),
                 ("activations", self.other_memory_s)]
        return ", ".join(f"{name} {100 * v / t:.0f}%" for name, v in parts if v > 0.005 * t)


def step_split(step: StepEval) -> StepSplit:
    """GEMM times by their bound, non-GEMM operation times by theirs (a scalar step)."""
    g = step.gemm.count * step.gemm.time
    g_compute = step.gemm.bound == COMPUTE
    o = step.ops.time
    o_compute = step.ops.bound == COMPUTE
    kv = step.ops.reads_kv
    return StepSplit(
        compute_s=float(g[g_compute].sum() + o[o_compute].sum()),
        weights_s=float(g[~g_compute].sum()),
        kv_cache_s=float(o[~o_compute & kv].sum()),
        other_memory_s=float(o[~o_compute & ~kv].sum()),
    )


def compute_bound_batch(res: Resources, cells: Sequence[PrecisionRecipe], gemms: GemmList,
                        gemms_at: Callable[[int], GemmList] | None = None) -> int | None:
    """The smallest batch at which the decode GEMMs, taken together, spend at least as long computing as
    streaming: ``sum_j t_compute,j >= sum_j t_memory,j``, all GEMMs at ``M = batch``. None when no batch
    up to 65536 gets there. (Attention over the KV cache grows with the batch too and never turns
    compute-bound; it is not part of this figure.) ``gemms_at``: the step's GEMMs at a batch, when they
    change with it beyond M (a mixture of experts reads more experts): a bisection over the batch."""
    if gemms_at is not None:
        def turned(b: int) -> bool:
            g = gemms_at(b)
            e = evaluate_step(res, cells, g).gemm
            return bool((e.count * e.t_compute).sum() >= (e.count * e.t_memory).sum())

        lo, hi = 1, int(BATCH_SWEEP[-1])
        if not turned(hi):
            return None
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if turned(mid) else (mid + 1, hi)
        return lo
    m = np.broadcast_to(BATCH_SWEEP[:, None], (len(BATCH_SWEEP), len(gemms))).astype(float)
    step = evaluate_step(res, cells, gemms, m=m)
    count = np.asarray(gemms.count, dtype=float)
    hits = np.nonzero((count * step.gemm.t_compute).sum(axis=1) >= (count * step.gemm.t_memory).sum(axis=1))[0]
    return int(BATCH_SWEEP[hits[0]]) if hits.size else None
