"""The realistic model: the ceiling of a step plus named terms. One arithmetic, vectorised over steps,
serves estimate, check, calibrate, plan and the stack fit.

``realistic = ceiling + sum(terms)``, the terms (:class:`TermName`):

- activation quantization: dynamic quantization reads X for the per-token scale search and again
  to write it in INT8, two passes. Static quantization has its scale fixed, so in a compiled model
  Inductor fuses the quantize into the kernel that produces X (layer norm, the GeLU epilogue): its
  ops, no extra pass. A linear called on its own (``graph=False``) has no producer to fuse into: a
  pass reading X and writing it in INT8. Each pass is priced by the same roofline as the step
  (its bytes at the level X lives in, its ops on the vector path), over a fitted quantization
  efficiency;
- smoothing: SmoothQuant's per-channel ``X / s`` is fused into the quantization pass (0 s, listed
  so that nobody counts it twice);
- u8 shift and compensation: on parts whose INT8 path is VNNI (u8 x s8), activations are shifted by
  128 in the quantization pass and every output corrected, ``M N`` vector ops per GEMM;
- unfused post-ops: nothing beyond the ceiling either way (dynamic INT8 runs GeLU as its own pass,
  which the ceiling's non-GEMM work already counts; static INT8 fuses it);
- dispatch: one graph call plus one launch per GEMM (fitted);
- GEMM kernel efficiency, attention efficiency, other non-GEMM efficiency: each part's ceiling time
  over its fitted efficiency ``eta``, as the seconds beyond the ceiling ``t (1 / eta - 1)``.

The arithmetic (:func:`realistic_times`) works on :class:`StepParts`, a step's ceiling split into
what each efficiency scales, for any number of steps at once (a plan's layouts, every figure of
the fit): GEMM rows flattened with the index of their step. Its efficiencies come per row and per
step in a :class:`RowEfficiency`, resolved from a calibration or a stack profile
(:mod:`roofline.model.efficiency`) or from the fit's parameter vector.

Efficiencies are capped at 1: the ceiling bounds every real run, so a fitted value above 1 says the
ceiling's inputs are off (a violation to report), not that a kernel beats it. Hence
``realistic >= ceiling``, with equality when nothing is fitted and every term is zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np

from roofline.calc.barriers import barrier_seconds
from roofline.calc.core_stream import serial_kernel_seconds
from roofline.calc.levels import level_bandwidth, level_of
from roofline.calc.shapes import GemmList
from roofline.model.resources import Resources
from roofline.model.step import StepEval
from roofline.spec.op_costs import cost
from roofline.spec.precision import PrecisionRecipe
from roofline.spec.vocab import NonGemmMode, ShapeForm
from roofline.units import DTYPE_BYTES

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


class TermName(str, Enum):
    ACTIVATION_QUANTIZATION = "activation quantization"
    SMOOTHING = "smoothing"
    COMPENSATION = "u8 shift and compensation"
    POST_OPS = "unfused post-ops"
    DISPATCH = "dispatch"
    GEMM_EFFICIENCY = "GEMM kernel efficiency"
    ONE_ROW_STREAM = "weight stream not overlapped"
    ATTENTION_EFFICIENCY = "attention efficiency"
    OTHER_EFFICIENCY = "other non-GEMM efficiency"


#: the terms that scale with the GEMMs' ceiling time
GEMM_TERMS = (TermName.GEMM_EFFICIENCY, TermName.ONE_ROW_STREAM)
#: the terms that belong to the linear block (the GEMM kernels' own time)
LINEAR_BLOCK_TERMS = (TermName.COMPENSATION, *GEMM_TERMS)
#: the efficiency terms: they scale a part of the ceiling
EFFICIENCY_TERMS = (*GEMM_TERMS, TermName.ATTENTION_EFFICIENCY, TermName.OTHER_EFFICIENCY)


@dataclass(frozen=True)
class Term:
    name: TermName | str
    seconds: float
    how: str
    calibrated: bool = False


# ------------------------------------------------------------------------------- the inputs


@dataclass(frozen=True)
class StepParts:
    """``P`` steps' ceilings split into what each efficiency scales; GEMM rows flattened (``R`` of them),
    ``row_step`` naming each row's step. Seconds are per step on the whole platform."""

    row_step: np.ndarray
    """(R,) the step of each GEMM row"""
    count: np.ndarray
    """(R,) calls per step"""
    t_compute: np.ndarray
    """(R,) one call's compute time at the ceiling"""
    t_extra: np.ndarray
    """(R,) the part of it that is extra vector work (dequantization): it does not shrink with M"""
    t_unpack: np.ndarray
    """(R,) the part of ``t_extra`` that unpacks the weights (once per call)"""
    t_memory: np.ndarray
    """(R,) one call's memory time at the ceiling"""
    m: np.ndarray
    """(R,) each GEMM's multiply-accumulates per core of an instance, ``M x N x K / instance cores`` (the shape
    term's measure of its size)"""
    t_mac: np.ndarray
    """(R,) the time those take one core at its path's peak, ``2 W / (P / cores running)`` (the shape term's measure
    in time, :func:`mac_seconds`)"""
    rows: np.ndarray
    """(R,) each GEMM call's activation rows ``M`` (a decode GEMV's 1)"""
    t_weights: np.ndarray
    """(R,) the part of ``t_memory`` that streams the weights (the same whatever M)"""
    t_core_weights: np.ndarray
    """(R,) that stream at what the busy cores pull on their own (NaN: no per-core figure; :class:`~roofline.model.step.GemmEval`)"""
    attention_s: np.ndarray
    """(P,) attention at the ceiling"""
    other_s: np.ndarray
    """(P,) the other non-GEMM work (norms, activations, residual adds) at the ceiling"""
    quantization_s: np.ndarray
    """(P,) the activation quantization passes at efficiency 1"""
    compensation_s: np.ndarray
    """(P,) the u8 shift and compensation (no efficiency scales it)"""
    launches: np.ndarray
    """(P,) GEMM launches per step"""
    barrier_s: np.ndarray
    """(P,) one instance's graph's thread barriers per step (:func:`roofline.calc.barriers.barrier_seconds`; 0 when
    the stack counts none)"""
    instances: np.ndarray
    """(P,) the instances sharing the platform: a step's times are one instance's call over them (the whole
    platform, amortised), so one call's dispatch, paid by each instance, counts ``1 / instances`` here"""
    gemm_ceiling_s: np.ndarray
    """(P,) the GEMMs at the ceiling: ``sum_i count_i max(t_compute,i, t_memory,i)`` (the step evaluator's sum)"""
    ceiling_s: np.ndarray
    """(P,) the step's ceiling (the step evaluator's)"""
    pass_compute_s: np.ndarray
    """(P, O) each of the other non-GEMM passes' vector work at the ceiling (0 in attention's column); O may be
    padded with zero columns"""
    pass_memory_s: np.ndarray
    """(P, O) each pass's memory time at the ceiling (``other_s`` is ``sum_o max(compute, memory)``)"""
    att_compute_s: np.ndarray
    """(P, O) each attention matmul's compute time at the ceiling (0 in the other passes' columns)"""
    att_memory_s: np.ndarray
    """(P, O) its memory time (``attention_s`` is ``sum_o max(compute, memory)``)"""
    quant_compute_s: np.ndarray
    """(P, S) each GEMM row's activation quantization pass: its vector work at the ceiling (0: none)"""
    quant_memory_s: np.ndarray
    """(P, S) its memory time (``quantization_s`` is ``sum_i max(compute, memory)``)"""
    lead: tuple[int, ...] = ()
    """the steps' leading axes (``P = prod(lead)``); () for one step"""
    sync_s: np.ndarray | None = None
    """(P,) a tensor-parallel split's all-reduce flag waits per step (:func:`roofline.calc.allreduce.sync_seconds`:
    counted, not fitted); None: not split"""
    att_kernel: np.ndarray | None = None
    """(P,) the time the stack's measured attention kernel takes per score over the ceiling's
    (:func:`with_attention_kernel`; NaN: no kernel stated, the attention efficiency prices it); None: none"""
    att_kernel_name: str = ""
    """the measured kernels' names (for the attention term's text)"""

    @property
    def steps(self) -> int:
        return len(self.attention_s)

    def size(self, shape: ShapeForm) -> np.ndarray:
        """(R,) each GEMM call's size as the shape term in ``shape`` measures it: its time at its path's peak
        (:attr:`t_mac`) for the term in time, else its work per core (:attr:`m`)."""
        return self.t_mac if shape is ShapeForm.TIME else self.m

    def shaped(self, values: np.ndarray) -> float | np.ndarray:
        """Per-step values back in the leading axes' shape (a float for one step)."""
        return float(values[0]) if not self.lead else values.reshape(self.lead)


def concat_parts(parts: Sequence[StepParts]) -> StepParts:
    """Several steps' parts as one (the fit's figures): rows renumbered to their step's new index."""
    offsets = np.cumsum([0] + [p.steps for p in parts[:-1]])
    def cat(name: str) -> np.ndarray:
        return np.concatenate([getattr(p, name) for p in parts])
    padded: dict[str, Any] = {k: _padded([getattr(p, k) for p in parts], [p.steps for p in parts])
                              for k in ("pass_compute_s", "pass_memory_s", "att_compute_s", "att_memory_s",
                                        "quant_compute_s", "quant_memory_s")}
    return StepParts(row_step=np.concatenate([p.row_step + o for p, o in zip(parts, offsets)]),
                     count=cat("count"), t_compute=cat("t_compute"), t_extra=cat("t_extra"), t_unpack=cat("t_unpack"),
                     t_memory=cat("t_memory"), m=cat("m"), t_mac=cat("t_mac"), rows=cat("rows"),
                     t_weights=cat("t_weights"), t_core_weights=cat("t_core_weights"),
                     attention_s=cat("attention_s"), other_s=cat("other_s"),
                     quantization_s=cat("quantization_s"), compensation_s=cat("compensation_s"),
                     launches=cat("launches"), barrier_s=cat("barrier_s"), instances=cat("instances"), gemm_ceiling_s=cat("gemm_ceiling_s"),
                     ceiling_s=cat("ceiling_s"),
                     lead=(int(sum(p.steps for p in parts)),),
                     sync_s=None if all(p.sync_s is None for p in parts) else np.concatenate(
                         [np.zeros(p.steps) if p.sync_s is None else p.sync_s for p in parts]),
                     att_kernel=None if all(p.att_kernel is None for p in parts) else np.concatenate(
                         [np.full(p.steps, np.nan) if p.att_kernel is None else p.att_kernel for p in parts]),
                     att_kernel_name=", ".join(dict.fromkeys(p.att_kernel_name for p in parts if p.att_kernel_name)),
                     **padded)


def _padded(blocks: Sequence[np.ndarray], steps: Sequence[int]) -> np.ndarray:
    """``(P, O)`` blocks of different widths (models with different passes) stacked, zero columns added."""
    width = max(b.shape[-1] for b in blocks)
    out = np.zeros((int(sum(steps)), width))
    row = 0
    for b, n in zip(blocks, steps):
        out[row:row + n, :b.shape[-1]] = b.reshape(n, -1)
        row += n
    return out


@dataclass(frozen=True)
class RowEfficiency:
    """The efficiencies of :func:`realistic_times`, resolved: per GEMM row and per step (each may carry a leading
    batch axis, ``(B, R)`` and ``(B, P)``: the fit evaluates several parameter vectors at once)."""

    eta: np.ndarray
    """(R,) the compute efficiency of each row, shape term included, at most 1"""
    shape: np.ndarray
    """(R,) the shape term ``W / (W + work_half)`` already in ``eta`` (1 without one)"""
    limit: np.ndarray
    """(R,) the most of the ceiling's rate a row's multiply-accumulates reach whatever ``eta`` (a latency-bound
    kernel's; 1 without one)"""
    memory: np.ndarray
    """(R,) memory-bound rows: the ceiling's memory time over the real one"""
    attention: np.ndarray
    """(P,)"""
    other: np.ndarray
    """(P,)"""
    quantization: np.ndarray
    """(P,)"""
    call_s: np.ndarray
    """(P,) one compiled graph call"""
    per_op_s: np.ndarray
    """(P,) each GEMM launch"""
    pass_memory: np.ndarray | None = None
    """(P,) the other non-GEMM passes' and the quantization passes' memory time: the ceiling's over the real one
    (their vector work then at ``other`` and ``quantization``); None: each whole pass at its efficiency"""
    unpack: np.ndarray | None = None
    """(R,) the activation rows each row's unpacking is repeated for (None: once, as the ceiling's kernel)"""
    extra: np.ndarray | None = None
    """(R,) the extra vector work's efficiency (None: ``eta`` without the shape term, at most 1)"""
    serial: np.ndarray | float = 0.0
    """(R,) the share of a one-row call's smaller time (its arithmetic at the ceiling's rates, its weight stream)
    that adds to the larger (a stack's path rule: its GEMVs do not overlap the two; 0: they do)"""
    attention_path: np.ndarray | None = None
    """(P,) the attention matmuls' rate over the ceiling's matmul path peak (a stack's path rule sends them to a
    slower path); None: the ceiling's"""
    kernel_s: np.ndarray | None = None
    """(R,) a kernel table's compute time of each call over its class's efficiency (NaN: not priced so; None: no
    row is): such a row takes ``max(C, t_m / eta_m)`` (the kernel computes beside its stream), never less than its
    ceiling"""
    one: np.ndarray | None = None
    """(R,) the efficiency a one-row call of each row's shape is priced at (a GEMV's: no shape term), for the bound
    ``t(M) <= M t(1)``; None: ``eta`` without the shape term, at most 1"""
    kernel_serial: np.ndarray | None = None
    """(R,) the share of each row's weights' stream at the cores' own bandwidth that adds to its kernel table's
    kernel on each core (:func:`~roofline.calc.core_stream.serial_kernel_seconds`; 0: overlapped); None: none"""


@dataclass(frozen=True)
class Times:
    """(P,) each step's realistic seconds, by part."""

    gemm_s: np.ndarray
    attention_s: np.ndarray
    other_s: np.ndarray
    quantization_s: np.ndarray
    compensation_s: np.ndarray
    dispatch_s: np.ndarray
    stream_s: np.ndarray
    """the part of ``gemm_s`` that is one activation row's compute not overlapped with the weights' stream"""

    @property
    def linear_s(self) -> np.ndarray:
        """the linear block: the GEMM kernels and their compensation"""
        return self.gemm_s + self.compensation_s

    @property
    def non_gemm_s(self) -> np.ndarray:
        return self.attention_s + self.other_s + self.quantization_s + self.dispatch_s

    @property
    def total_s(self) -> np.ndarray:
        return self.linear_s + self.non_gemm_s


def _passes(whole: np.ndarray, compute: np.ndarray, memory: np.ndarray, eta: np.ndarray,
            pass_memory: np.ndarray | None) -> np.ndarray:
    """(P,) passes' realistic seconds (:func:`realistic_times`): ``whole / eta``, or, with a pass memory
    efficiency, ``sum_o max(compute_o / eta, memory_o / eta_pass)``."""
    if pass_memory is None:
        return whole / eta
    return np.maximum(compute / eta[..., None], memory / pass_memory[..., None]).sum(axis=-1)


def _attention(parts: StepParts, e: RowEfficiency) -> np.ndarray:
    """(P,) attention's realistic seconds (:func:`realistic_times`): its ceiling over its efficiency, or, in a step
    a measured kernel runs, ``sum_o max(k t_c,o, t_m,o / eta_pass)``: its arithmetic at the kernel's cost per score
    (``k`` times the ceiling's) and its KV reads at the pass memory efficiency (1 without one)."""
    fitted = (parts.attention_s if e.attention_path is None else np.maximum(
        parts.att_compute_s / e.attention_path[..., None], parts.att_memory_s).sum(axis=-1)) / e.attention
    if parts.att_kernel is None:
        return fitted
    k = np.isfinite(parts.att_kernel)
    memory = parts.att_memory_s if e.pass_memory is None else parts.att_memory_s / e.pass_memory[..., None]
    counted = np.maximum(parts.att_compute_s * np.where(k, parts.att_kernel, 1.0)[:, None], memory).sum(axis=-1)
    return np.where(k, counted, fitted)


def _per_step(rows: np.ndarray, row_step: np.ndarray, steps: int) -> np.ndarray:
    """``(..., P)``: the rows' values ``(..., R)`` summed per step (one ``bincount`` over every batch)."""
    lead = rows.shape[:-1]
    n = int(np.prod(lead))
    idx = (row_step + steps * np.arange(n)[:, None]).ravel()
    return np.bincount(idx, rows.reshape(n, -1).ravel(), minlength=n * steps).reshape(lead + (steps,))


#: a call of at most this many activation rows (a decode step's batch) is capped at that many one-row calls whether
#: its one-row call streams or computes (:func:`realistic_times`): 16, the rows of one AMX tile and about the most a
#: CPU GEMM microkernel holds in registers, so a call of fewer rows is one pass of partial blocks over the weights
GEMV_ROWS = 16


def realistic_times(parts: StepParts, e: RowEfficiency) -> Times:
    """Every step's realistic time, by part:

    - GEMMs: ``sum_i count_i max(C_i, t_m,i / eta_m,i, T1_i)``, ``T1_i = max(C1_i, t_w,i / eta_m,i) +
      s min(C1_i, t_w,i / eta_m,i)``, with
      ``C_i = max((t_c,i - t_e,i) / eta_i + (t_e,i + (u_i - 1) t_u,i) / min(eta_i / shape_i, 1),
      (t_c,i - t_e,i) / limit_i)``: the multiply-accumulates at their efficiency (shape term included), the
      extra vector work (dequantization) at the efficiency without the shape term (it is per weight, not per
      row; ``t_u,i``, its unpacking, repeated for each of ``u_i`` activation rows by a kernel that unpacks every
      block again per row, once by one that does not: ``u_i = 1``), a latency-bound kernel's
      multiply-accumulates at its rate limit (its unpacking inside that time), the memory time at the memory
      efficiency; ``T1_i`` is what the same call takes with one activation row, whose kernel (a GEMV) streams the
      weights (``t_w,i``, their part of ``t_m,i``) without overlapping its arithmetic on them (``C1_i``: the
      multiply-accumulates and the per-output extra work over ``M_i``, the weights' unpacking once, at the ceiling's
      rates: the ALU work that cannot hide behind the loads, whatever the kernel's efficiency), by
      ``s``, the stack's one-row serial share (a path rule; 0 without one); no call of more rows takes less (a GEMM
      that overlaps well is priced as before, and the time never shrinks as ``M`` grows); and none takes more than
      ``M`` one-row calls, ``M max(t_m1,i / eta_m,i, C1_i', T1_i)`` (``t_m1,i``: its weights and one row's
      activations, ``C1_i'``: its arithmetic at the efficiency a call of ``M = 1`` is priced at, a GEMV's, without
      the shape term), where such a call is memory-bound (``t_m1,i / eta_m,i >= C1_i'``) or the call has at most
      :data:`GEMV_ROWS` rows: a kernel can always run the rows one by one, so ``t(M) <= M t(1)``, and a decode step
      at batch 2 costs at most two at batch 1, whether the one-row call streams its weights or computes (a BF16 GEMV
      on a CPU that emulates BF16); a compute-bound call of more rows (a prefill's, an encoder's) is its GEMM
      kernel's, and the one-row efficiency, fitted on GEMVs, gives no bound for it;
    - attention: its ceiling over its efficiency, each matmul's compute time first over ``a``, the rate of the
      path a stack's rule runs it on over the ceiling's (``sum_o max(t_c,o / a, t_m,o) / eta``; ``a = 1``:
      the ceiling's path); where the stack's measured kernel runs it, ``sum_o max(k t_c,o, t_m,o / eta_pass)``,
      ``k`` that kernel's time per score over the ceiling's (:func:`with_attention_kernel`), no efficiency fitted;
    - the other non-GEMM passes and the quantization passes: their ceiling over their efficiency, or, with a pass
      memory efficiency, ``sum_o max(t_c,o / eta, t_m,o / eta_pass)``: each pass's vector work at its efficiency
      and its memory time at the memory one (a pass that spills out of L2 runs at a share of that level's
      bandwidth, not at the share of L2's that passes inside it reach);
    - compensation as priced; dispatch ``(call_s + launches x per_op_s + T_b) / instances``: each instance pays
      its own calls and its graph's barriers ``T_b`` (counted, not fitted), and a step's time is one instance's call
      over the instances."""
    eta_x = np.minimum(e.eta / e.shape, 1.0) if e.extra is None else e.extra
    t_mac = parts.t_compute - parts.t_extra
    t_extra = parts.t_extra if e.unpack is None else parts.t_extra + (e.unpack - 1.0) * parts.t_unpack
    t_c = np.maximum(t_mac / e.eta + t_extra / eta_x, t_mac / e.limit)
    t_m = parts.t_memory / e.memory
    per_row = 1.0 / np.maximum(parts.rows, 1.0)  # one row's share of what grows with M (its unpacking does not)
    arith1 = (t_mac + parts.t_extra - parts.t_unpack) * per_row + parts.t_unpack  # one row's, its unpacking once
    t_c1 = np.maximum(arith1, t_mac * per_row / e.limit)
    larger = np.maximum(t_c, t_m)
    t_w = parts.t_weights / e.memory
    one_row = np.maximum(t_c1, t_w) + e.serial * np.minimum(t_c1, t_w)
    stream = parts.count * np.maximum(one_row - larger, 0.0)
    rows = parts.count * larger + stream
    # no call of M rows takes longer than M one-row calls of it (a GEMV per activation row), a one-row call priced
    # without the shape term: where it streams its weights for longer than it computes, for any M; where it computes,
    # for a call of at most GEMV_ROWS rows (a decode batch; a prefill's or an encoder's call of hundreds of rows is its
    # GEMM kernel's, priced by the shape term, and the one-row efficiency, fitted on GEMVs, says nothing of it)
    m_rows = np.maximum(parts.rows, 1.0)
    x1 = np.minimum(e.eta / e.shape, 1.0) if e.one is None else e.one
    gemv_c = np.maximum(arith1 / x1, t_mac * per_row / e.limit)
    gemv_m = (parts.t_weights + (parts.t_memory - parts.t_weights) * per_row) / e.memory
    cap = np.where((gemv_m >= gemv_c) | (m_rows <= GEMV_ROWS),
                   parts.count * m_rows * np.maximum(np.maximum(gemv_m, gemv_c), one_row), np.inf)
    capped = np.minimum(rows, cap)
    stream = np.clip(capped - parts.count * larger, 0.0, stream)
    rows = capped
    if e.kernel_s is not None:  # the kernel's compute beside its stream, and never below the ceiling
        kern = np.isfinite(e.kernel_s)
        ceiling = np.maximum(parts.t_compute, parts.t_memory)
        alone = np.where(kern, e.kernel_s, 0.0)
        own = serial_kernel_seconds(alone, parts.t_core_weights, 0.0 if e.kernel_serial is None else e.kernel_serial)
        total_k = np.maximum(np.maximum(own, t_m), ceiling)
        # the stream term: what each core's own stream adds to the kernel (its serial_stream share), nothing else
        added = total_k - np.maximum(np.maximum(alone, t_m), ceiling)
        stream = np.where(kern, parts.count * added, stream)
        rows = np.where(kern, parts.count * total_k, rows)
    return Times(gemm_s=_per_step(rows, parts.row_step, parts.steps),
                 stream_s=_per_step(stream, parts.row_step, parts.steps),
                 attention_s=_attention(parts, e),
                 other_s=_passes(parts.other_s, parts.pass_compute_s, parts.pass_memory_s, e.other, e.pass_memory),
                 quantization_s=_passes(parts.quantization_s, parts.quant_compute_s, parts.quant_memory_s,
                                        e.quantization, e.pass_memory),
                 compensation_s=parts.compensation_s,
                 dispatch_s=(e.call_s + parts.launches * e.per_op_s + parts.barrier_s
                             + (0.0 if parts.sync_s is None else parts.sync_s)) / parts.instances)


# ------------------------------------------------------------------------------- a step's parts


def mac_seconds(work: np.ndarray, peak: np.ndarray | float, res: Resources) -> np.ndarray:
    """The shape term's measure in time: ``2 W / (P / cores running)``, the seconds a GEMM call's ``W``
    multiply-accumulates per core (:func:`work_per_core`) take one core at the peak ``P`` of its path on the
    layout's running cores (the path's peak per row, as the step's GEMMs have it). A call's fixed costs (a
    thread barrier, packing, tile set-up) are paid in time, so a call this short on an AMX core is as small as
    one 16 times longer in FP32 on AVX-512."""
    lay = res.layout
    cores = np.asarray(lay.active_cores, dtype=float) * lay.sockets
    cores = np.expand_dims(cores, -1) if np.ndim(cores) else cores
    return 2.0 * np.asarray(work, dtype=float) * cores / np.asarray(peak, dtype=float)


def work_per_core(m: np.ndarray, gemms: GemmList, res: Resources) -> np.ndarray:
    """The shape term's measure of a GEMM's size: its multiply-accumulates per core of one instance,
    ``M x N x K / instance_cores`` (any leading axes of ``m`` or of the layout's instance cores). The work, not
    the outputs: a decode GEMV of 4,096 x 4,096 on 40 cores has about 100 outputs per core but 420,000
    multiply-accumulates, as much work per call as a 128-token GEMM's."""
    cores = np.asarray(res.layout.instance_cores, dtype=float)
    cores = cores.reshape(cores.shape + (1,) * (np.ndim(m) - 1)) if np.ndim(cores) and np.ndim(m) > 1 else cores
    return np.asarray(m, dtype=float) * gemms.n * gemms.k / (cores if np.ndim(cores) == 0 or np.ndim(m) > 1 else cores[..., None])


def step_parts(res: Resources, recipe: PrecisionRecipe, gemms: GemmList, step: StepEval, *, mode: NonGemmMode,
               graph: bool = True, m: np.ndarray | None = None) -> StepParts:
    """The parts of an evaluated step (any leading axes) of ``recipe``; ``graph``: the GEMMs sit in a
    compiled model (False: one linear compiled and called on its own); ``m``: the rows' M when the step
    was evaluated at other rows than ``gemms``' (a sweep). No thread barriers: :func:`with_barriers` adds them."""
    g = step.gemms
    lead = g.flops.shape[:-1]
    rows = g.flops.shape[-1]
    def flat(a: ArrayLike) -> np.ndarray:
        return np.broadcast_to(a, g.flops.shape).reshape(-1)
    def per_step(a: ArrayLike) -> np.ndarray:
        return np.broadcast_to(a, lead).reshape(-1).astype(float)
    m = np.asarray(gemms.m if m is None else m, dtype=float)
    attention = step.attention_time
    quant, comp, q_compute, q_memory = _quantization_seconds(res, recipe, gemms, step, NonGemmMode(mode), graph, m)
    rows_m = m
    m = work_per_core(m, gemms, res)
    t_mac = mac_seconds(m, g.peak, res)
    n_steps = int(np.prod(lead)) if lead else 1
    ops = step.ops
    def per_op(t: ArrayLike, which: np.ndarray) -> np.ndarray:
        return np.broadcast_to(t, (*lead, len(ops.names))).reshape(n_steps, -1) * which
    def per_row(t: ArrayLike) -> np.ndarray:
        return np.broadcast_to(t, (*lead, rows)).reshape(n_steps, -1)
    launches = per_step(np.sum(g.count, axis=-1))
    return StepParts(row_step=np.repeat(np.arange(n_steps), rows), count=flat(g.count), t_compute=flat(g.t_compute),
                     t_extra=flat(g.t_extra), t_unpack=flat(g.t_unpack), t_memory=flat(g.t_memory), m=flat(m),
                     t_mac=flat(t_mac),
                     rows=flat(rows_m), t_weights=flat(g.t_weights), t_core_weights=flat(g.t_core_weights),
                     attention_s=per_step(attention),
                     other_s=per_step(step.non_gemm_time - attention), quantization_s=per_step(quant),
                     compensation_s=per_step(comp), launches=launches, barrier_s=np.zeros_like(launches),
                     instances=per_step(res.layout.total_instances),
                     gemm_ceiling_s=per_step(step.gemm_time), ceiling_s=per_step(step.step_time), lead=lead,
                     pass_compute_s=per_op(ops.t_compute, ~ops.matmul), pass_memory_s=per_op(ops.t_memory, ~ops.matmul),
                     att_compute_s=per_op(ops.t_compute, ops.matmul), att_memory_s=per_op(ops.t_memory, ops.matmul),
                     quant_compute_s=per_row(q_compute), quant_memory_s=per_row(q_memory))


def with_syncs(parts: StepParts, seconds: np.ndarray | float) -> StepParts:
    """``parts`` with a tensor-parallel split's all-reduce flag waits (:attr:`StepParts.sync_s`)."""
    return replace(parts, sync_s=np.broadcast_to(np.asarray(seconds, dtype=float), parts.lead).reshape(-1).copy())


def with_barriers(parts: StepParts, res: Resources, rounds_per_layer: float, layers: int,
                  threads: int | None = None) -> StepParts:
    """``parts`` with its engine's graph barriers, :func:`~roofline.calc.barriers.barrier_seconds` of ``layers`` at
    ``rounds_per_layer`` (a stack's :class:`~roofline.spec.stack.BarrierRule`) over ``threads`` per instance (None:
    one per core of an instance, or of a tensor-parallel rank: a process's); unchanged where the stack counts none."""
    if rounds_per_layer <= 0 or layers <= 0:
        return parts
    n = res.layout.rank_cores if threads is None else threads
    value = barrier_seconds(layers, rounds_per_layer, n, res.line_transfer_s)
    return replace(parts, barrier_s=np.broadcast_to(value, parts.lead).reshape(-1).astype(float))


def with_attention_kernel(parts: StepParts, factor: ArrayLike, name: str = "") -> StepParts:
    """``parts`` with each step's measured attention kernel: its time per score over the ceiling's
    (:func:`roofline.model.efficiency.attention_kernel_factors`; NaN: none); unchanged where no step has one."""
    k = np.broadcast_to(np.asarray(factor, dtype=float), parts.lead).reshape(-1)
    if not np.any(np.isfinite(k)):
        return parts
    return replace(parts, att_kernel=k.astype(float), att_kernel_name=name)


def _quantization_seconds(res: Resources, recipe: PrecisionRecipe, gemms: GemmList, step: StepEval,
                          mode: NonGemmMode, graph: bool, m: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The activation quantization passes at efficiency 1, the u8 compensation (module docstring), and each GEMM
    row's quantization pass as its vector work and its memory time (``(..., S)``, zeros where none)."""
    if recipe.compute_dtype != "int8":
        return np.zeros(()), np.zeros(()), np.zeros(len(gemms.k)), np.zeros(len(gemms.k))
    e_act = DTYPE_BYTES[mode.activation_dtype]
    k = gemms.k.astype(float)
    c = np.asarray(step.gemms.count, dtype=float)
    x_el = m * k
    dynamic = recipe.x_scale == "per-token"
    fused = (graph and not dynamic) or (mode is NonGemmMode.INT8 and not dynamic)
    q_bytes = c * x_el * (0.0 if fused else e_act + 1)
    q_ops = c * x_el * cost("quantize_ops_per_element")
    if dynamic:
        q_bytes = q_bytes + c * x_el * e_act
        q_ops = q_ops + c * x_el * cost("scale_search_ops_per_element")
    vector = np.expand_dims(np.asarray(res.vector_peak, dtype=float), -1)
    level = level_of(x_el * e_act, np.expand_dims(step.l2_capacity, -1), np.expand_dims(step.llc_capacity, -1))
    bw = level_bandwidth(level, *(np.expand_dims(b, -1) for b in res.bandwidths()))
    q_compute, q_memory = q_ops / vector, q_bytes / bw
    quant = np.maximum(q_compute, q_memory).sum(axis=-1)
    comp = np.zeros(())
    if "amx_int8" not in res.platform.isa:
        comp = (c * m * gemms.n.astype(float)).sum(axis=-1) * cost("compensation_ops_per_output") / vector[..., 0]
    return quant, comp, q_compute, q_memory


# ------------------------------------------------------------------------------- resolved efficiencies


@dataclass(frozen=True)
class Efficiency:
    """Fitted efficiencies of one precision in one non-GEMM mode (1 and 0 s: not fitted), as a
    calibration or a stack profile gives them; :meth:`rows` resolves them for a step's parts."""

    gemm: float | np.ndarray = 1.0
    """GEMMs inside a compiled model: compute efficiency, one value or one per GEMM row"""
    kernel: float | np.ndarray = 1.0
    """one linear compiled and called on its own"""
    shape: float | np.ndarray = 1.0
    """the shape term ``W / (W + work_half)`` of each GEMM row, already in ``gemm`` and ``kernel``: it
    scales the multiply-accumulates only, the extra vector work (dequantization) runs at the
    efficiency without it"""
    limit: float | np.ndarray = 1.0
    """the most of the ceiling's rate each GEMM row's multiply-accumulates reach, whatever ``gemm``: a stack's
    latency-bound kernel (:func:`~roofline.model.efficiency.chain_limit`)"""
    unpack: float | np.ndarray = 1.0
    """the activation rows each GEMM row's unpacking (its extra vector work) is repeated for: its M under a
    kernel that unpacks every block again per row (:func:`~roofline.model.efficiency.unpack_rows`), else 1"""
    serial: float | np.ndarray = 0.0
    """each GEMM row's one-row serial share (:func:`~roofline.model.efficiency.one_row_serial`)"""
    attention_path: float = 1.0
    """the attention matmuls' rate over the ceiling's matmul path (:func:`~roofline.model.efficiency.attention_path`)"""
    kernel_s: np.ndarray | None = None
    """each GEMM row's compute time per call from a kernel table's cycles over its kernel class's efficiency
    (NaN: a row the table does not price; None: none does)"""
    kernel_serial: np.ndarray | None = None
    """each GEMM row's share of its weights' stream at the cores' own bandwidth that adds to its kernel (the
    table's ``serial_stream``; 0: overlapped); None: no row is priced by a kernel table"""
    gemm_extra: float | np.ndarray | None = None
    """the extra vector work's efficiency of each GEMM row in a compiled model (None: ``gemm`` without the shape
    term); a row floored at its one-row class's (:func:`~roofline.model.efficiency.one_row_floor`) has its own"""
    kernel_extra: float | np.ndarray | None = None
    """the same for one linear called on its own"""
    gemm_one: float | np.ndarray | None = None
    """the efficiency of a one-row call of each GEMM row's shape in a compiled model, as a call of ``M = 1`` is priced
    (None: ``gemm`` without the shape term): the bound ``t(M) <= M t(1)`` of :func:`realistic_times`"""
    kernel_one: float | np.ndarray | None = None
    """the same for one linear called on its own"""
    memory: float | None = None
    """memory-bound GEMMs: the ceiling's memory time over the real one (None: the compute efficiency's)"""
    attention: float = 1.0
    other: float = 1.0
    """norms, activations, residual adds"""
    pass_memory: float | None = None
    """those passes' memory time: the ceiling's over the real one, their vector work then at ``other`` (None:
    each whole pass at ``other``)"""
    quantization: float = 1.0
    """the activation quantization kernels inside a compiled model"""
    kernel_quantization: float = 1.0
    """the standalone quantize of one linear called on its own"""
    call_s: float = 0.0
    """one call of a compiled graph"""
    per_op_s: float = 0.0
    """each GEMM launch inside a compiled graph"""
    barrier_rounds: float = 0.0
    """the stack's thread-barrier rounds per layer (a counted rule, not fitted: :attr:`StepParts.barrier_s`)"""
    source: str = ""
    """where the values come from (a calibration file, a stack profile)"""
    fitted: frozenset[str] = field(default_factory=frozenset)
    """which of the fields were fitted (the others are defaults)"""

    def capped(self) -> "Efficiency":
        """Every efficiency at most 1 (see the module docstring)."""
        keys = ("gemm", "kernel", "attention", "other", "quantization", "kernel_quantization")
        out = {k: np.minimum(getattr(self, k), 1.0) for k in keys}
        for name in ("memory", "pass_memory"):
            if getattr(self, name) is not None:
                out[name] = min(getattr(self, name), 1.0)
        return replace(self, **out)

    def rows(self, parts: StepParts, graph: bool = True) -> RowEfficiency:
        """Per row and per step of ``parts`` (a value per GEMM row repeats over the steps)."""
        e = self.capped()
        r, p = len(parts.row_step), parts.steps
        def per_row(v: ArrayLike) -> np.ndarray:
            return np.broadcast_to(np.asarray(v, dtype=float), (p, r // p) if p else (0, 0)).reshape(-1)
        def per_step(v: ArrayLike) -> np.ndarray:
            return np.broadcast_to(np.asarray(v, dtype=float), (p,))
        eta = per_row(e.gemm if graph else e.kernel)
        extra = e.gemm_extra if graph else e.kernel_extra
        one = e.gemm_one if graph else e.kernel_one
        return RowEfficiency(eta=eta, shape=per_row(e.shape), limit=per_row(e.limit), unpack=per_row(e.unpack),
                             kernel_s=None if self.kernel_s is None else per_row(self.kernel_s),
                             kernel_serial=None if self.kernel_serial is None else per_row(self.kernel_serial),
                             extra=None if extra is None else per_row(extra),
                             one=None if one is None else per_row(one),
                             serial=per_row(e.serial),
                             memory=eta if e.memory is None else per_row(e.memory),
                             attention=per_step(e.attention), other=per_step(e.other),
                             quantization=per_step(e.quantization if graph else e.kernel_quantization),
                             call_s=per_step(e.call_s if "call_s" in e.fitted else 0.0),
                             per_op_s=per_step(e.per_op_s if "call_s" in e.fitted else 0.0),
                             pass_memory=None if e.pass_memory is None else per_step(e.pass_memory),
                             attention_path=None if self.attention_path == 1.0 else per_step(self.attention_path))


UNFITTED = Efficiency()


# ------------------------------------------------------------------------------- one step, in terms


@dataclass(frozen=True)
class Realistic:
    """A step's ceiling, split into its parts, and the realistic time with its terms."""

    gemm_s: float
    """GEMMs at the ceiling"""
    attention_s: float
    other_s: float
    """the other non-GEMM work at the ceiling"""
    terms: list[Term]
    ceiling_s: float
    """the step's ceiling: the sum of the three parts"""

    @property
    def realistic_s(self) -> float:
        return self.ceiling_s + sum(t.seconds for t in self.terms)

    def seconds(self, *names: TermName) -> float:
        return sum(t.seconds for t in self.terms if t.name in names)

    @property
    def gemm_factor(self) -> float:
        """realistic over ceiling time of the GEMM kernels (efficiency only)"""
        return 1.0 + self.seconds(*GEMM_TERMS) / self.gemm_s if self.gemm_s > 0 else 1.0

    @property
    def non_gemm_factor(self) -> float:
        non = self.attention_s + self.other_s
        extra = self.seconds(TermName.ATTENTION_EFFICIENCY, TermName.OTHER_EFFICIENCY)
        return 1.0 + extra / non if non > 0 else 1.0

    def in_frame(self, gemm_s: float, non_gemm_s: float) -> list[Term]:
        """The terms with the efficiency ones rescaled to a frame whose GEMM and non-GEMM ceilings are
        ``gemm_s`` and ``non_gemm_s`` (the Amdahl frame of measured or overridden ``f, s, s_non``): they then
        add up to that frame's realistic time minus its ceiling."""
        non = self.attention_s + self.other_s
        g = gemm_s / self.gemm_s if self.gemm_s > 0 else 0.0
        scale: dict[str, float] = {TermName.GEMM_EFFICIENCY: g, TermName.ONE_ROW_STREAM: g,
                 TermName.ATTENTION_EFFICIENCY: non_gemm_s / non if non > 0 else 0.0,
                 TermName.OTHER_EFFICIENCY: non_gemm_s / non if non > 0 else 0.0}
        return [replace(t, seconds=t.seconds * scale.get(t.name, 1.0)) for t in self.terms]

    @property
    def fixed_s(self) -> float:
        """the terms that do not scale a part of the ceiling (quantization, compensation, dispatch)"""
        return sum(t.seconds for t in self.terms if t.name not in EFFICIENCY_TERMS)


def realistic_step(res: Resources, recipe: PrecisionRecipe, gemms: GemmList, step: StepEval, *, mode: NonGemmMode,
                   eff: Efficiency = UNFITTED, graph: bool = True) -> Realistic:
    """The realistic time of one evaluated step (no leading axis) of ``recipe``, in named terms:
    :func:`realistic_times` on its :func:`step_parts`."""
    parts = step_parts(res, recipe, gemms, step, mode=mode, graph=graph)
    return describe(parts, realistic_times(parts, eff.rows(parts, graph)), recipe, res, eff, graph, NonGemmMode(mode))


def describe(parts: StepParts, times: Times, recipe: PrecisionRecipe, res: Resources, eff: Efficiency, graph: bool,
             mode: NonGemmMode, index: int = 0) -> Realistic:
    """Step ``index`` of ``parts`` and its realistic ``times`` as named terms."""
    i = index
    def at(a: ArrayLike) -> float:
        return float(np.asarray(a)[i])
    e = eff.capped()
    fitted = e.fitted
    gemm_s, attention_s, other_s = at(parts.gemm_ceiling_s), at(parts.attention_s), at(parts.other_s)
    terms: list[Term] = []
    if recipe.compute_dtype == "int8":
        terms += _quantization_terms(recipe, res, at(times.quantization_s), at(times.compensation_s), e, graph, mode)
    barrier = at(parts.barrier_s)
    barriers = (f" + thread barriers {barrier * 1e6:.0f} us ({e.barrier_rounds:g} rounds per layer, counted from the "
                "engine's graph, x threads x core-to-core latency)" if barrier > 0 else "")
    sync = 0.0 if parts.sync_s is None else at(parts.sync_s)
    if sync > 0:
        barriers += (f" + the tensor-parallel ranks' all-reduce flags {sync * 1e6:.0f} us (2 all-reduces per layer, "
                     "each a round of flags or two, x (ranks - 1) x rank-to-rank latency: counted)")
        barrier += sync
    if "call_s" in fitted:
        calls, n = at(parts.launches), at(parts.instances)
        shared = f", each instance's, over {n:g} instances" if n > 1 else ""
        terms.append(Term(TermName.DISPATCH, at(times.dispatch_s),
                          f"one graph call {e.call_s * 1e6:.0f} us + {calls:g} GEMM launches x {e.per_op_s * 1e6:.1f} us"
                          f"{barriers}{shared} ({e.source})", calibrated=True))
    elif barrier > 0:
        terms.append(Term(TermName.DISPATCH, at(times.dispatch_s), barriers.removeprefix(" + "), calibrated=False))
    else:
        terms.append(Term(TermName.DISPATCH, 0.0, "not fitted: run `roofline calibrate` on a validate report of this host"))
    eta_c = np.minimum(np.asarray(e.gemm if graph else e.kernel, dtype=float), e.limit)  # a rate limit included
    lo, hi = float(np.min(eta_c)), float(np.max(eta_c))
    span = f"{lo:.0%}" if hi - lo < 0.005 else f"{lo:.0%}-{hi:.0%}"
    memory = "" if e.memory is None else f", memory-bound ones at {e.memory:.0%} of their bandwidth"
    stream = at(times.stream_s)
    terms.append(Term(TermName.GEMM_EFFICIENCY, max(at(times.gemm_s) - stream - gemm_s, 0.0),
                      f"the GEMM kernels at {span} of their compute ceiling{memory} ({e.source})"
                      if hi < 1 or e.memory is not None else "kernels at their ceiling (not fitted)",
                      ("gemm" if graph else "kernel") in fitted))
    if stream > 0:
        own = e.kernel_serial is not None and bool(np.any(np.asarray(e.kernel_serial) > 0))
        terms.append(Term(TermName.ONE_ROW_STREAM, stream,
                          "each core's own weight stream (one core's read bandwidth x the cores busy) added to the "
                          "kernels that load their blocks between their arithmetic (the kernel table's serial_stream, "
                          "measured)" if own else
                          "one activation row's arithmetic on the streamed weights (at the ceiling's rates), which "
                          f"the stream does not overlap (the stack's GEMVs: a path rule of {e.source})", False))
    passes = "" if e.pass_memory is None else f", their memory time at {e.pass_memory:.0%} of its bandwidth"
    path = "" if e.attention_path == 1.0 else (f" on the path the stack runs their matmuls on ({e.attention_path:.3g} x "
                                               "the ceiling's: a path rule)")
    kernel = np.nan if parts.att_kernel is None else at(parts.att_kernel)
    if np.isfinite(kernel):
        terms.append(Term(TermName.ATTENTION_EFFICIENCY, max(at(times.attention_s) - attention_s, 0.0),
                          f"attention by the engine's {parts.att_kernel_name} kernel: {kernel:.3g} x the ceiling's "
                          "arithmetic per score, measured (its stack's attention_kernels), the KV reads at "
                          f"{1.0 if e.pass_memory is None else e.pass_memory:.0%} of their bandwidth", True))
    for name, t, real, eta, key, what, how in (
            (TermName.ATTENTION_EFFICIENCY, attention_s, at(times.attention_s), e.attention, "attention", "attention",
             f"of their roofline{path}"),
            (TermName.OTHER_EFFICIENCY, other_s, at(times.other_s), e.other, "other", "norms, activations, residual adds",
             "of their roofline" if e.pass_memory is None else f"of their vector rate{passes}")):
        if name is TermName.ATTENTION_EFFICIENCY and np.isfinite(kernel):
            continue
        terms.append(Term(name, max(real - t, 0.0), f"{what} at {eta:.0%} {how} ({mode}, {e.source})"
                          if eta < 1 or (key == "other" and e.pass_memory is not None and e.pass_memory < 1)
                          else f"{what} at their roofline (not fitted)", key in fitted))
    return Realistic(gemm_s, attention_s, other_s, terms, at(parts.ceiling_s))


def _quantization_terms(recipe: PrecisionRecipe, res: Resources, quant: float, comp: float, e: Efficiency,
                        graph: bool, mode: NonGemmMode) -> list[Term]:
    eta_q = e.quantization if graph else e.kernel_quantization
    dynamic = recipe.x_scale == "per-token"
    fused = (graph and not dynamic) or (mode is NonGemmMode.INT8 and not dynamic)
    passes = ("a scale-search pass and a quantize pass over each GEMM input X (per token)" if dynamic else
              "the quantize fused into the kernel producing each GEMM input X (per tensor): its ops, no extra pass"
              if fused else "a quantize pass over the GEMM input X (per tensor)")
    memory = "" if e.pass_memory is None else f", its memory time at {e.pass_memory:.0%} of its bandwidth"
    terms = [Term(TermName.ACTIVATION_QUANTIZATION, quant,
                  passes + (f", over the fitted quantization efficiency {eta_q:.2f}" if eta_q != 1.0 else "") + memory,
                  calibrated=("quantization" if graph else "kernel_quantization") in e.fitted),
             Term(TermName.SMOOTHING, 0.0, "SmoothQuant's X / s, fused into the quantization pass")]
    if "amx_int8" not in res.platform.isa:
        terms.append(Term(TermName.COMPENSATION, comp, "no AMX: VNNI/AVX2 multiply u8 x s8, so X is shifted by 128 in "
                          "the quantize pass and each output corrected (M N ops per GEMM)"))
    else:
        terms.append(Term(TermName.COMPENSATION, 0.0, "AMX multiplies s8 x s8: none needed"))
    terms.append(Term(TermName.POST_OPS, 0.0,
                      "dynamic INT8: GeLU runs as its own pass over the FFN-up output, as in the baseline: the "
                      "ceiling's non-GEMM work already counts it" if dynamic else
                      "static INT8: GeLU and the residual add fused into the GEMM epilogue"))
    return terms


def dispatch_s(eff: Efficiency, calls: float) -> float:
    """One compiled graph call holding ``calls`` GEMM launches; 0 when not fitted."""
    return eff.call_s + calls * eff.per_op_s


def realistic_speedup(f: float, s: float, s_non: float, base: Realistic, new: Realistic) -> float:
    """The realistic speedup in the Amdahl frame of the ceiling: the baseline's time split into GEMMs
    (share ``f``) and the rest, ``T_b = G_b / f`` with ``G_b`` the baseline's GEMM ceiling; each part
    scaled by its realistic factor ``rho`` and the fixed terms added:

    ``T_b' = G_b rho_g(b) + G_b (1-f)/f rho_n(b) + fixed(b)``,
    ``T' = G_b/s rho_g + G_b (1-f)/(f s_non) rho_n + fixed``, ``S' = T_b' / T'``.

    With the modelled ``f``, ``s`` and ``s_non`` this is ``base.realistic_s / new.realistic_s``; with
    measured or overridden ones it keeps their Amdahl frame."""
    g = base.gemm_s
    if not (f > 0 and g > 0):
        return base.realistic_s / new.realistic_s
    non_b = g * (1 - f) / f
    t_base = g * base.gemm_factor + non_b * base.non_gemm_factor + base.fixed_s
    t_new = g / s * new.gemm_factor + non_b / s_non * new.non_gemm_factor + new.fixed_s
    return t_base / t_new


def linear_block_speedup(s: float, base: Realistic, new: Realistic) -> float:
    """The realistic linear-block speedup: ``G_b rho_g(b) / (G_b/s rho_g + compensation)``."""
    g = base.gemm_s
    comp_b, comp = base.seconds(TermName.COMPENSATION), new.seconds(TermName.COMPENSATION)
    return (g * base.gemm_factor + comp_b) / (g / s * new.gemm_factor + comp)
