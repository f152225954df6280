"""``roofline sweep``: a grid of models x CPUs x precisions x batch x sequence, row per point.

For each (model, CPU) the (batch x sequence) points are evaluated a chunk at a time
(:data:`CHUNK_POINTS`), each chunk one calculator call for every precision: GEMM rows ``M`` become a
``(points, shapes)`` array and the non-GEMM work an ``(ops, points)`` array, so a million points take
seconds, and the memory a sweep holds is one chunk's whatever the grid's size. Rows come in (model, CPU)
order, within one chunk by chunk, each chunk's points for every precision in turn (a (batch x sequence)
plane within one chunk: precision by precision).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from roofline.calc.energy import joules_per_unit
from roofline.files.columns import Block, Constant, Words
from roofline.model.build import CeilingSpec, LayoutSpec, StepOptions, build_steps
from roofline.model.energy import power_draw
from roofline.model.step import BOUNDS
from roofline.model.workload import Workload, make_workload
from roofline.results.sweep import COLUMNS, SweepTable
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.vocab import Phase

__all__ = ["CHUNK_POINTS", "COLUMNS", "AxisValues", "Plane", "plane", "planes", "sweep", "sweep_table"]

#: points evaluated in one calculator call: a block of the table
CHUNK_POINTS = 1 << 16
#: an axis of up to this many values is de-duplicated (first occurrence kept); a longer one stays lazy
DEDUP_LIMIT = 1 << 22
BOUND_WORDS = tuple(b.value for b in BOUNDS)


class AxisValues:
    """A sweep axis's values (its ranges, in order), read by position without holding a long axis in memory."""

    def __init__(self, ranges: Sequence[range] | Sequence[int]) -> None:
        ranges = [r if isinstance(r, range) else range(int(r), int(r) + 1) for r in ranges]
        total = sum(len(r) for r in ranges)
        self._values: np.ndarray | None = None
        if total <= DEDUP_LIMIT:
            self._values = np.fromiter(dict.fromkeys(x for r in ranges for x in r), dtype=np.int64)
            self._ranges: list[range] = []
        else:
            self._ranges = [r for r in ranges if len(r)]
            self._starts = np.cumsum([0] + [len(r) for r in self._ranges])
        self._len = len(self._values) if self._values is not None else total

    def __len__(self) -> int:
        return self._len

    def take(self, idx: np.ndarray) -> np.ndarray:
        if self._values is not None:
            return self._values[idx]
        which = np.searchsorted(self._starts, idx, side="right") - 1
        start = np.array([r.start for r in self._ranges])[which]
        step = np.array([r.step for r in self._ranges])[which]
        return start + (idx - self._starts[which]) * step

    def max(self) -> int:
        if self._values is not None:
            return int(self._values.max())
        return max(max(r) for r in self._ranges)

    def tolist(self) -> list[int]:
        return self.take(np.arange(len(self))).tolist()


@dataclass(frozen=True)
class Plane:
    """One (model, CPU, precision) over (batch x sequence) points: every column an array over them."""

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
    """indices into :data:`BOUND_WORDS`"""
    weight_bytes: np.ndarray
    """weights read per step (estimate's ``weight_bytes``: a mixture of experts reads the experts its tokens chose)"""
    llc_resident: bool
    power_w: float | None = None
    """a busy server's draw, sockets used x TDP + overhead (:func:`roofline.model.energy.power_draw`); None: no
    power figure"""

    def __len__(self) -> int:
        return len(self.batch)

    @property
    def throughput_per_s(self) -> np.ndarray:
        return self.batch / self.step_time_s

    @property
    def joules_per_sample(self) -> np.ndarray | None:
        """``P / throughput_per_s``: a sequence's forward pass or prefill, or one decode token of a sequence."""
        return None if self.power_w is None else joules_per_unit(self.power_w, self.throughput_per_s)

    @property
    def joules_per_token(self) -> np.ndarray | None:
        """``P x step_time_s / m``: per token the step processes."""
        return None if self.power_w is None else joules_per_unit(self.power_w, self.m / self.step_time_s)

    def block(self) -> Block:
        """The plane's rows as a table block."""
        return Block(len(self), {
            "model": Constant(self.model), "cpu": Constant(self.cpu), "precision": Constant(self.precision),
            "phase": Constant(self.phase), "batch": self.batch, "seq_len": self.seq_len,
            "context": Constant(self.context), "m": self.m, "gemm_time_s": self.gemm_time_s,
            "step_time_s": self.step_time_s, "throughput_per_s": self.throughput_per_s,
            "aggregate_ops_per_s": self.aggregate_ops_per_s, "bound": Words(self.bound, BOUND_WORDS),
            "weight_bytes": self.weight_bytes, "llc_resident": Constant(self.llc_resident),
            **{k: Constant(None) if v is None else v for k, v in (("joules_per_sample", self.joules_per_sample),
                                                                  ("joules_per_token", self.joules_per_token))},
        })

    def rows(self) -> Iterator[dict[str, Any]]:
        """The rows as dictionaries (plain Python values), one per point."""
        throughput, per_sample, per_token = self.throughput_per_s, self.joules_per_sample, self.joules_per_token
        for i in range(len(self)):
            yield {
                "model": self.model, "cpu": self.cpu, "precision": self.precision, "phase": self.phase,
                "batch": int(self.batch[i]), "seq_len": int(self.seq_len[i]), "context": self.context,
                "m": int(self.m[i]), "gemm_time_s": float(self.gemm_time_s[i]), "step_time_s": float(self.step_time_s[i]),
                "throughput_per_s": float(throughput[i]), "aggregate_ops_per_s": float(self.aggregate_ops_per_s[i]),
                "bound": BOUND_WORDS[int(self.bound[i])], "weight_bytes": float(self.weight_bytes[i]),
                "llc_resident": self.llc_resident,
                "joules_per_sample": None if per_sample is None else float(per_sample[i]),
                "joules_per_token": None if per_token is None else float(per_token[i]),
            }


def _evaluate(platform: Platform, model: ModelSpec, work: Workload, precisions: list[str], b: np.ndarray,
              s: np.ndarray, *, ceiling: CeilingSpec, layout: LayoutSpec, overhead_w: float = 0.0) -> list[Plane]:
    """Every precision at the points ``(b[i], s[i])``: one :func:`build_steps` call."""
    b, s = b.astype(float), s.astype(float)
    steps = build_steps(platform, work, precisions, layout=layout, ceiling=ceiling,
                        options=StepOptions(realistic=False), batch=b, seq_len=s)
    res = steps.res
    power_w = power_draw(platform, res.layout.sockets, overhead_w).watts
    decode = work.phase is Phase.DECODE
    tokens = (b if decode else b * s).astype(np.int64)
    out = []
    for built in steps:
        step = built.step
        resident = bool(step.fits_llc) and res.b_llc is not None
        out.append(Plane(model.name, platform.name, built.name, work.phase.value, b.astype(np.int64),
                         s.astype(np.int64), work.context if decode else None, tokens, step.gemm_time, step.step_time,
                         step.aggregate, np.asarray(step.bound, dtype=np.int64),
                         np.broadcast_to(step.weight_read_bytes, b.shape).astype(float), resident, power_w))
    return out


def planes(platform: Platform, model: ModelSpec, precisions: list[str], batches: Sequence[int],
           seq_lens: Sequence[int], *, phase: Phase | None = None, context: int | None = None,
           ceiling: CeilingSpec = CeilingSpec(), layout: LayoutSpec = LayoutSpec()) -> list[Plane]:
    """Every (batch x sequence) point of one (model, CPU) in each precision, in one call (a small grid)."""
    work = make_workload(model, phase, max(batches), max(seq_lens), context)  # every combination's limits, once
    b, s = (a.ravel() for a in np.meshgrid(np.asarray(batches), np.asarray(seq_lens), indexing="ij"))
    return _evaluate(platform, model, work, precisions, b, s, ceiling=ceiling, layout=layout)


def plane(platform: Platform, model: ModelSpec, precision: str, batches: Sequence[int], seq_lens: Sequence[int],
          **kw: Any) -> Plane:
    """One precision's :func:`planes`."""
    return planes(platform, model, [precision], batches, seq_lens, **kw)[0]


def sweep(platforms: list[Platform], models: list[ModelSpec], precisions: list[str], batches: Sequence[int] | AxisValues,
          seq_lens: Sequence[int] | AxisValues, *, phase: Phase | None = None, context: int | None = None,
          ceiling: CeilingSpec = CeilingSpec(), layout: LayoutSpec = LayoutSpec(),
          chunk: int = CHUNK_POINTS, overhead_w: float = 0.0) -> Iterator[Plane]:
    """Every plane, a chunk of points at a time: (model, CPU) in order, then chunk by chunk, each chunk's
    precisions in turn."""
    batches = batches if isinstance(batches, AxisValues) else AxisValues(batches)
    seq_lens = seq_lens if isinstance(seq_lens, AxisValues) else AxisValues(seq_lens)
    n, n_seq = len(batches) * len(seq_lens), len(seq_lens)
    for model, platform in itertools.product(models, platforms):
        work = make_workload(model, phase, batches.max(), seq_lens.max(), context)
        for start in range(0, n, chunk):
            idx = np.arange(start, min(start + chunk, n))
            yield from _evaluate(platform, model, work, precisions, batches.take(idx // n_seq),
                                 seq_lens.take(idx % n_seq), ceiling=ceiling, layout=layout, overhead_w=overhead_w)


def sweep_table(platforms: list[Platform], models: list[ModelSpec], precisions: list[str], batches: AxisValues,
                seq_lens: AxisValues, *, grid: str = "", **kw: Any) -> SweepTable:
    """The sweep as a lazy :class:`~roofline.results.sweep.SweepTable` (evaluated block by block when read)."""
    points = len(platforms) * len(models) * len(precisions) * len(batches) * len(seq_lens)

    def blocks() -> Iterator[Block]:
        return (p.block() for p in sweep(platforms, models, precisions, batches, seq_lens, **kw))

    return SweepTable(blocks, points, grid)
