"""``roofline sweep``: a grid of models x CPUs x precisions x batch x sequence, row per point.

For each (model, CPU, precision) the whole (batch x sequence) plane is one calculator call:
GEMM rows ``M`` become a ``(points, shapes)`` array and the non-GEMM work an ``(ops, points)``
array, so a million points take seconds.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from roofline.model.build import CeilingSpec, LayoutSpec, StepOptions, build_steps
from roofline.model.step import BOUNDS
from roofline.model.workload import make_workload
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.vocab import Phase

COLUMNS = ("model", "cpu", "precision", "phase", "batch", "seq_len", "context", "m", "gemm_time_s", "step_time_s",
           "throughput_per_s", "aggregate_ops_per_s", "bound", "weight_bytes", "llc_resident")


@dataclass(frozen=True)
class Plane:
    """One (model, CPU, precision): every column an array over the (batch x sequence) points."""

    model: str
    cpu: str
    precision: str
    phase: str
    batch: np.ndarray
    seq_len: np.ndarray
    context: int | None
    m: np.ndarray
    gemm_time_s: np.ndarray
    step_time_s: np.ndarray
    aggregate_ops_per_s: np.ndarray
    bound: np.ndarray
    weight_bytes: np.ndarray
    """weights read per step (estimate's ``weight_bytes``: a mixture of experts reads the experts its tokens chose)"""
    llc_resident: bool

    def __len__(self) -> int:
        return len(self.batch)

    def rows(self) -> Iterator[dict]:
        throughput = self.batch / self.step_time_s
        for i in range(len(self)):
            yield {
                "model": self.model, "cpu": self.cpu, "precision": self.precision, "phase": self.phase,
                "batch": int(self.batch[i]), "seq_len": int(self.seq_len[i]), "context": self.context,
                "m": int(self.m[i]), "gemm_time_s": float(self.gemm_time_s[i]), "step_time_s": float(self.step_time_s[i]),
                "throughput_per_s": float(throughput[i]), "aggregate_ops_per_s": float(self.aggregate_ops_per_s[i]),
                "bound": str(self.bound[i]), "weight_bytes": float(self.weight_bytes[i]), "llc_resident": self.llc_resident,
            }


def planes(platform: Platform, model: ModelSpec, precisions: list[str], batches: list[int], seq_lens: list[int], *,
           phase: Phase | None = None, context: int | None = None, ceiling: CeilingSpec = CeilingSpec(),
           layout: LayoutSpec = LayoutSpec()) -> list[Plane]:
    """Every (batch x sequence) point of one (model, CPU) in each precision: one :func:`build_steps` call."""
    # checks every combination's limits once, on the largest
    work = make_workload(model, phase, max(batches), max(seq_lens), context)
    b, s = (a.ravel().astype(float) for a in np.meshgrid(batches, seq_lens, indexing="ij"))
    steps = build_steps(platform, work, precisions, layout=layout, ceiling=ceiling,
                        options=StepOptions(realistic=False), batch=b, seq_len=s)
    res = steps.res
    decode = work.phase is Phase.DECODE
    tokens = (b if decode else b * s).astype(int)
    words = np.asarray([x.value for x in BOUNDS])
    out = []
    for built in steps:
        step = built.step
        resident = bool(step.fits_llc) and res.b_llc is not None
        out.append(Plane(model.name, platform.name, built.name, work.phase.value, b.astype(int), s.astype(int),
                         work.context if decode else None, tokens, step.gemm_time, step.step_time, step.aggregate,
                         words[step.bound], np.broadcast_to(step.weight_read_bytes, b.shape).astype(float), resident))
    return out


def plane(platform: Platform, model: ModelSpec, precision: str, batches: list[int], seq_lens: list[int],
          **kw) -> Plane:
    """One precision's :func:`planes`."""
    return planes(platform, model, [precision], batches, seq_lens, **kw)[0]


def sweep(platforms: list[Platform], models: list[ModelSpec], precisions: list[str], batches: list[int],
          seq_lens: list[int], **kw) -> Iterator[Plane]:
    """Every (model, CPU, precision) plane, in that order (models, then CPUs, then precisions)."""
    for model, platform in itertools.product(models, platforms):
        yield from planes(platform, model, precisions, batches, seq_lens, **kw)
