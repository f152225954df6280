"""Stack profiles fitted from the records' figures, and the figures a profile predicts.

The fit: least squares, in log space, of ``log(predicted / measured)`` over the figures (each platform
weighted alike, and each record alike within its platform: ``1 / sqrt(its figures x its platform's
records)``), with a weak pull of every efficiency towards 1 so that a class no figure constrains stays
at its ceiling; bounds ``0.001 <= eta <= 1``, ``0 <= work_half <=`` :data:`WORK_HALF_MAX` multiply-accumulates
per core (and a second fit without the shape term, ``work_half = 0``:
:func:`roofline.fidelity.forms.choose_forms`).
A class the training records never use takes the profile's fallback at prediction time
(:func:`roofline.model.efficiency.lookup`; for a stack fitted on too few platforms, the cross-stack value
:attr:`Params.cross`, which is looked up, never fitted).

A profile must predict a CPU it has never seen, so what it holds for one is common to the stack (efficiency per
compute path class, memory efficiency against the attainable bandwidth, the non-GEMM parts, dispatch), and what
differs between CPUs comes from their platform files. In one form of the fit (``factors``) each record platform
also gets a factor on its cores' efficiencies (its real clock against the platform file's, a VM's share of the
host): the classes are then told apart by what they reach on the same CPUs, not by which CPUs ran them, and an
unseen CPU takes the factors' geometric mean (:func:`~roofline.spec.stack.typical_factor`), so its prediction
never rests on a factor of its own. Which form a stack keeps is chosen by its leave-one-platform-out figures
(:func:`roofline.fidelity.forms.choose_forms`). Dispatch costs are the validate reports' measured ones
where the records have them, else fitted (per call 1 us to 2 ms, per GEMM launch 0.01 to 20 us).

Every prediction, the fit's and the reported ones alike, is the realistic model's own arithmetic
(:func:`roofline.model.realistic.realistic_times`) over all figures' steps at once (:class:`FitTable`),
the per-row efficiencies resolved from a parameter vector or a :class:`Params` by
:func:`roofline.model.efficiency.shaped`, as a stack profile's estimate resolves them. The least-squares
Jacobian is scipy's forward differences, its columns evaluated in one batch (:func:`forward_jacobian`).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from roofline.catalog.records import LoadedRecord
from roofline.errors import UserError
from roofline.fidelity.figures import Figure
from roofline.model.efficiency import gemm_eta, mode_value, one_row_floor
from roofline.model.realistic import RowEfficiency, concat_parts, realistic_times
from roofline.spec.mla import MlaRule
from roofline.spec.sourced import Sourced, bare_values
from roofline.spec.stack import (
    KERNEL_MAX,
    Accuracy,
    AttentionKernel,
    BarrierRule,
    DispatchRule,
    FormChoice,
    PathRule,
    SharedKvRule,
    StackProfile,
    UnfusedAttentionRule,
    is_kernel_class,
    is_timed_class,
    typical_factor,
)
from roofline.spec.vocab import FigureKind, Scenario, ShapeForm, StepPart

PULL = 0.02
#: in the form with platform factors (:func:`fit`, ``factors``): the pull of each platform's factor towards 1, five
#: times the efficiencies' :data:`PULL`, so that the factors and the classes, which share one scale, keep the factors'
#: geometric mean near 1 (of 0.03 to 1, the weight whose leave-one-platform-out figures were closest in torch-inductor:
#: docs/check-and-calibration.md)
PLATFORM_PULL = 0.1
#: the range of a fitted platform factor
PLATFORM_RANGE = (0.2, 5.0)
#: the ranges of the fitted dispatch costs, seconds: per call of the engine (a step: graph launch and
#: sampling) and per GEMM launch (a kernel call and the thread barrier after it); the validate reports measure
#: 25 us and 4.6 us for Inductor's compiled graphs on the development guests
CALL_S = (1e-6, 2e-3)
PER_OP_S = (1e-8, 2e-5)
ANY_MODE = "any"
#: the shape term's half-efficiency work (multiply-accumulates per core) when the figures cannot tell (all GEMMs of
#: similar size): 2,048 outputs over K = 1,024; assumed, stated in the profile
WORK_HALF_ASSUMED = 2048.0 * 1024
#: the largest half-efficiency work the fit may choose: a 256 x 256 output tile per core over K = 4,096 (beyond it
#: the shape term would stand in for a kernel's plain efficiency, which the class efficiency holds)
WORK_HALF_MAX = 256.0 * 256 * 4096
#: the spread of GEMM sizes (largest over smallest work per core) the figures need for the shape term to be fitted
WORK_SPREAD = 16.0
#: a path class whose GEMM rows are less than this share of the ceiling time of every figure it appears in is not
#: fitted: so small a part cannot be told apart from the rest of its figures' error, and a fit left free with it
#: gives it whatever value absorbs that error (an MoE router's F32 rows at 2% of FP32 peak, priced onto every F16
#: prefill); it is held at 1, its ceiling's rate
MIN_CLASS_SHARE = 0.05
#: the same in time (:data:`~roofline.spec.vocab.ShapeForm.TIME`): the half-efficiency call time when the figures
#: cannot tell, and the largest the fit may choose: :data:`WORK_HALF_ASSUMED` and :data:`WORK_HALF_MAX` on a core of
#: 64 FP32 ops per cycle (AVX-512) at 3 GHz, 22 us and 2.8 ms
CORE_OPS_PER_S = 64 * 3.0e9
TIME_HALF_ASSUMED = 2 * WORK_HALF_ASSUMED / CORE_OPS_PER_S
TIME_HALF_MAX = 2 * WORK_HALF_MAX / CORE_OPS_PER_S


@dataclass
class Params:
    """A profile's fitted values as the fit sees them."""

    gemm: dict[str, float] = field(default_factory=dict)
    """compute efficiency per path class, in a compiled model"""
    kernel_ratio: float = 1.0
    """one linear called on its own reaches this times the in-model efficiency"""
    work_half: float = 0.0
    """the shape term's half-efficiency value: multiply-accumulates per core, or seconds (``shape``)"""
    shape: ShapeForm = ShapeForm.WORK
    """what ``work_half`` measures a GEMM call by (NONE: the term left out, ``work_half`` 0)"""
    memory: float = 1.0
    attention: dict[str, float] = field(default_factory=dict)
    other: dict[str, float] = field(default_factory=dict)
    """norms, activations, residual adds and the quantization passes, per mode"""
    call_s: float = 0.0
    per_op_s: float = 0.0
    work_half_fitted: bool = False
    platform: dict[str, float] = field(default_factory=dict)
    """per record platform: how much faster (>1) or slower its cores ran than the profile's classes say
    (its clock against the datasheet's, a VM's share); an unseen platform gets their geometric mean"""
    dispatch_fitted: bool = False
    """call_s and per_op_s fitted from the figures (no validate report measured them)"""
    call_held: bool = False
    """call_s held at a value the Server runs chose (:func:`roofline.fidelity.forms.choose_forms`)"""
    kernel_table: dict[str, float] | None = None
    """a profile's own kernel efficiencies (as stored, rounded), instead of the ratio times the GEMM ones"""
    passes: bool = False
    """the other non-GEMM passes' memory time at ``memory``, their vector work at ``other`` (False: each whole
    pass at ``other``)"""
    held: frozenset[str] = frozenset()
    """classes the figures cannot pin (:data:`MIN_CLASS_SHARE`), held at 1 rather than fitted"""
    held_parts: frozenset[str] = frozenset()
    """non-GEMM parts (``attention``, ``other``) the figures cannot pin (:func:`part_shares`), held at 1"""
    cross: dict[str, float] = field(default_factory=dict)
    """a stack fitted on too few platforms: the cross-stack efficiency of the classes its figures never use
    (:func:`roofline.fidelity.accuracy.cross_stack`; not fitted, only looked up when predicting)"""

    @property
    def shape_left_out(self) -> bool:
        """``work_half`` is 0 because the stack's figures are predicted better without the shape term"""
        return self.shape is ShapeForm.NONE

    @property
    def kernel(self) -> dict[str, float]:
        if self.kernel_table is not None:
            return self.kernel_table
        return {k: min(v * self.kernel_ratio, 1.0) for k, v in self.gemm.items()}

    def factor(self, platform: str) -> float:
        """a platform's factor; an unseen one's: :func:`typical_factor`"""
        return self.platform[platform] if platform in self.platform else typical_factor(self.platform)


@dataclass(frozen=True)
class ParamLayout:
    """Where each fitted value sits in the parameter vector (all in log space but work_half)."""

    gemm: tuple[str, ...]
    modes: tuple[str, ...]
    kernels: bool
    """isolated linears among the figures: fit the kernel ratio"""
    work_half_free: bool = True
    dispatch_free: bool = False
    """no measured dispatch costs: fit the per-call and per-launch costs (log seconds, after work_half)"""
    passes: bool = False
    """the other non-GEMM passes' memory time at the memory efficiency (:attr:`Params.passes`)"""
    shape: ShapeForm = ShapeForm.WORK
    """what the shape term measures a GEMM call by: its work per core, or its time (NONE: as WORK, held at 0)"""
    platforms: tuple[str, ...] = ()
    """the platforms given a factor (log, after the dispatch costs); none: every factor 1"""

    @property
    def platform_index(self) -> int:
        """the first platform factor's: after the shape term and the two dispatch costs where they are fitted"""
        return self.work_half_index + 1 + (2 if self.dispatch_free else 0)

    @property
    def size(self) -> int:
        return self.platform_index + len(self.platforms)

    @property
    def work_half_index(self) -> int:
        return len(self.gemm) + 2 * len(self.modes) + 2

    def dispatch(self, x: np.ndarray, call_s: float, per_op_s: float) -> tuple[float, float]:
        """``(call_s, per_op_s)``: the fitted ones, or the measured ones given"""
        calls, per_ops = self.dispatch_many(np.asarray(x, dtype=float)[None, :], call_s, per_op_s)
        return float(calls[0]), float(per_ops[0])

    def exp(self, x: np.ndarray) -> np.ndarray:
        """``exp`` of the log-space entries (``work_half`` is linear: its entry is 1 here)"""
        return self.exp_many(np.asarray(x, dtype=float)[None, :])[0]

    def exp_many(self, xs: np.ndarray) -> np.ndarray:
        """:meth:`exp` of each row of ``xs`` ``(B, n)``"""
        logs = np.array(xs, dtype=float)
        logs[:, self.work_half_index] = 0.0
        return np.exp(logs)

    def dispatch_many(self, xs: np.ndarray, call_s: float, per_op_s: float) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`dispatch` of each row of ``xs`` ``(B, n)``: two ``(B,)`` arrays"""
        if not self.dispatch_free:
            return np.full(len(xs), call_s), np.full(len(xs), per_op_s)
        i = self.work_half_index
        return np.exp(xs[:, i + 1]), np.exp(xs[:, i + 2])

    def params(self, x: np.ndarray, call_s: float, per_op_s: float) -> Params:
        e = self.exp(x)
        g, nm = len(self.gemm), len(self.modes)
        call_s, per_op_s = self.dispatch(x, call_s, per_op_s)
        return Params(gemm=dict(zip(self.gemm, e[:g])), attention=dict(zip(self.modes, e[g:g + nm])),
                      other=dict(zip(self.modes, e[g + nm:g + 2 * nm])), memory=float(e[g + 2 * nm]),
                      kernel_ratio=float(e[g + 2 * nm + 1]) if self.kernels else 1.0,
                      work_half=float(x[self.work_half_index]), shape=self.shape, call_s=call_s, per_op_s=per_op_s,
                      work_half_fitted=self.work_half_free, dispatch_fitted=self.dispatch_free, passes=self.passes,
                      platform=dict(zip(self.platforms, (float(v) for v in e[self.platform_index:]))))


#: the figure's numerator or denominator piece: a part of its step's time, or a constant (-1)
_PIECE = {StepPart.ALL: 0, StepPart.LINEAR: 1, StepPart.NON_GEMM: 2}
_RATIO_PART = {FigureKind.SPEEDUP: StepPart.ALL, FigureKind.LINEAR_SPEEDUP: StepPart.LINEAR,
               FigureKind.NON_GEMM_SPEEDUP: StepPart.NON_GEMM}


@dataclass(frozen=True)
class FitTable:
    """Every figure's steps as one :class:`~roofline.model.realistic.StepParts`, with what the
    efficiencies of each row and step are looked up by, and how each figure is made of its steps'
    times (a time, a rate, a ratio of two)."""

    figures: tuple[Figure, ...]
    parts: object
    classes: tuple[str, ...]
    """the path classes of the rows, in the order of ``row_class``"""
    platforms: tuple[str, ...]
    row_class: np.ndarray
    row_graph: np.ndarray
    row_factor: np.ndarray
    row_limit: np.ndarray
    """each row's rate limit over the ceiling's path peak (a path rule's for its type, else 1)"""
    row_unpack: np.ndarray
    """the activation rows each row's unpacking is repeated for (a path rule's for its type and build, else 1)"""
    row_serial: np.ndarray
    """each row's one-row serial share (a path rule's, else 0)"""
    row_rows: np.ndarray
    """each row's activation rows (inf: many)"""
    row_kernel_s: np.ndarray
    """each row's call at its stack's kernel table's cycles (NaN: not priced so)"""
    floors: tuple[str, ...]
    """the one-row classes the rows' times are floored at, in the order of ``row_floor``"""
    row_floor: np.ndarray
    """each row's one-row class (:func:`~roofline.model.efficiency.one_row_floor`)"""
    step_platform: np.ndarray
    step_mode: tuple[str, ...]
    step_attention: np.ndarray | None
    """each step's attention matmuls' rate over the ceiling's path (a path rule's); None: every one 1"""
    num_which: np.ndarray
    """per figure: numerator's piece (0 all, 1 linear, 2 non-GEMM; -1 the constant ``num_const``)"""
    num_step: np.ndarray
    num_const: np.ndarray
    den_which: np.ndarray
    """denominator's piece (-1: none)"""
    den_step: np.ndarray
    latency_instances: np.ndarray | None = None
    """per figure: a latency's instances (its step's time is the platform's over them, one request is one
    instance's call: the time times them); None: every figure's 1"""
    row_kernel_serial: np.ndarray | None = None
    """each row's share of its weights' stream at the cores' own bandwidth that adds to its kernel table's kernel
    (0: overlapped)"""

    @classmethod
    def of(cls, figs: Sequence[Figure], classes: Sequence[str] | None = None,
           platforms: Sequence[str] | None = None) -> FitTable:
        classes = tuple(classes if classes is not None else sorted({c for f in figs for s in f.steps for c in s.classes}))
        platforms = tuple(platforms if platforms is not None else sorted({f.platform for f in figs}))
        steps, row_class, row_graph, row_factor, row_limit, step_platform, step_mode = [], [], [], [], [], [], []
        row_unpack: list[float] = []
        row_serial: list[float] = []
        row_rows: list[float] = []
        row_kernel_s: list[float] = []
        row_kernel_serial: list[float] = []
        floors = tuple(sorted({c for f in figs for s in f.steps for c in s.floors}))
        row_floor: list[int] = []
        step_attention: list[float] = []
        fig: dict[str, list] = {k: [] for k in ("nw", "ns", "nc", "dw", "ds", "li")}
        for f in figs:
            first = len(steps)
            for s in f.steps:
                n = len(s.classes)
                steps.append(s.parts)
                row_class += [classes.index(c) for c in s.classes]
                row_graph += [s.graph] * n
                row_factor += list(np.broadcast_to(s.factor, (n,)))
                row_limit += list(np.broadcast_to(s.limit, (n,)))
                row_unpack += list(np.broadcast_to(s.unpack, (n,)))
                row_serial += list(np.broadcast_to(s.serial, (n,)))
                row_rows += list(s.rows)
                row_kernel_s += list(s.kernel_s) if s.kernel_s is not None else [np.nan] * n
                row_kernel_serial += list(s.kernel_serial) if s.kernel_serial is not None else [0.0] * n
                row_floor += [floors.index(c) for c in s.floors]
                step_platform.append(platforms.index(f.platform))
                step_mode.append(s.mode.value)
                step_attention.append(s.attention_path)
            if f.kind.is_ratio:
                w = _PIECE[_RATIO_PART[f.kind]]
                fig["nw"].append(w), fig["ns"].append(first), fig["nc"].append(1.0)
                fig["dw"].append(w), fig["ds"].append(first + 1)
            elif f.kind is FigureKind.GEMM_SHARE:
                fig["nw"].append(_PIECE[StepPart.LINEAR]), fig["ns"].append(first), fig["nc"].append(1.0)
                fig["dw"].append(_PIECE[StepPart.ALL]), fig["ds"].append(first)
            elif f.kind.is_rate:
                fig["nw"].append(-1), fig["ns"].append(first)
                fig["nc"].append(float(f.batch if f.kind is FigureKind.THROUGHPUT else f.tokens))
                fig["dw"].append(_PIECE[StepPart.ALL]), fig["ds"].append(first)
            else:  # a time: one request's, on one instance, while the others run beside it
                fig["nw"].append(_PIECE[StepPart.ALL]), fig["ns"].append(first), fig["nc"].append(1.0)
                fig["dw"].append(-1), fig["ds"].append(first)
            fig["li"].append(float(np.max(f.steps[0].parts.instances))
                             if f.kind is FigureKind.LATENCY and f.steps else 1.0)
        a = lambda v, t=float: np.asarray(v, dtype=t)  # noqa: E731
        return cls(tuple(figs), concat_parts(steps), classes, platforms, a(row_class, int), a(row_graph, bool),
                   a(row_factor), a(row_limit), a(row_unpack), a(row_serial), a(row_rows), a(row_kernel_s), floors,
                   a(row_floor, int),
                   a(step_platform, int), tuple(step_mode),
                   None if all(v == 1.0 for v in step_attention) else a(step_attention), a(fig["nw"], int),
                   a(fig["ns"], int), a(fig["nc"]), a(fig["dw"], int), a(fig["ds"], int),
                   None if all(v == 1.0 for v in fig["li"]) else a(fig["li"]), a(row_kernel_serial))

    def efficiency(self, eta_graph: np.ndarray, eta_kernel: np.ndarray, work_half: float | np.ndarray,
                   memory: float | np.ndarray, attention: np.ndarray, other: np.ndarray, phi: np.ndarray,
                   call_s: float | np.ndarray, per_op_s: float | np.ndarray, passes: bool = False,
                   floor_graph: np.ndarray | None = None, floor_kernel: np.ndarray | None = None,
                   shape: ShapeForm = ShapeForm.WORK) -> RowEfficiency:
        """The rows' and steps' efficiencies from a profile's values: ``eta_graph`` and ``eta_kernel`` per
        class (in a compiled model, and one linear alone), ``attention`` and ``other`` per step, ``phi`` the factor
        per platform; the rows' path-rule factors, shape term and platform factor through
        :func:`~roofline.model.efficiency.shaped`, as an estimate with the profile resolves them; ``passes``: the
        other non-GEMM passes' and the quantization passes' memory time at ``memory`` too, the quantization passes'
        vector work at its roofline (:data:`QUANTIZATION_WITH_PASSES`). Several profiles at once: the class values
        ``(B, C)``, the step values ``(B, P)`` and the scalars ``(B,)`` (:meth:`predict_many`); ``floor_graph`` and
        ``floor_kernel``: the one-row classes' values, in the order of ``floors`` (NaN, or None for all: not
        fitted, no floor); ``shape``: what ``work_half`` measures each call by (its work per core, or its time)."""
        p = self.parts
        eta = np.where(self.row_graph, eta_graph[..., self.row_class], eta_kernel[..., self.row_class])
        if floor_graph is None:
            one = np.full(eta.shape, np.nan)
        else:
            one = np.where(self.row_graph, floor_graph[..., self.row_floor], floor_kernel[..., self.row_floor])
        phi_step = phi[..., self.step_platform]
        eta, shape_term, extra, one_call = one_row_floor(eta, one, self.row_rows, p.size(shape), work_half,
                                               self.row_factor * phi_step[..., p.row_step])
        kern = np.isfinite(self.row_kernel_s)
        kernel_s = None
        if kern.any():  # the table's cycles over the class's efficiency and the platform's factor (no shape, no cap)
            eta_kernel = eta_graph[..., self.row_class] * phi_step[..., p.row_step]
            kernel_s = np.where(kern, self.row_kernel_s / eta_kernel, np.nan)
        vector = np.minimum(other * phi_step, 1.0)
        per_step = lambda v: np.broadcast_to(np.asarray(v, dtype=float)[..., None], vector.shape)  # noqa: E731
        return RowEfficiency(eta=eta, shape=shape_term, limit=self.row_limit, unpack=self.row_unpack, extra=extra,
                             serial=self.row_serial,
                             memory=np.broadcast_to(np.asarray(memory, dtype=float)[..., None], eta.shape),
                             attention=np.minimum(attention * phi_step, 1.0), other=vector,
                             quantization=np.ones_like(vector) if passes else vector,
                             call_s=per_step(call_s), per_op_s=per_step(per_op_s),
                             pass_memory=per_step(memory) if passes else None, attention_path=self.step_attention,
                             kernel_s=kernel_s, one=one_call,
                             kernel_serial=None if kernel_s is None else self.row_kernel_serial)

    def figures_from(self, e: RowEfficiency | None) -> np.ndarray:
        """Every figure from its steps' realistic times with ``e`` (None: at the ceiling, no terms); ``(B, F)``
        for ``B`` profiles' efficiencies at once."""
        p = self.parts
        if e is None:
            linear = p.gemm_ceiling_s
            pieces = np.stack([p.ceiling_s, linear, p.ceiling_s - linear])
        else:
            t = realistic_times(p, e)
            pieces = np.stack([t.total_s, t.linear_s, t.non_gemm_s], axis=-2)
        num = np.where(self.num_which < 0, self.num_const, pieces[..., np.maximum(self.num_which, 0), self.num_step])
        den = np.where(self.den_which < 0, 1.0, pieces[..., np.maximum(self.den_which, 0), self.den_step])
        return num / den if self.latency_instances is None else num / den * self.latency_instances

    def predict(self, x: np.ndarray, lay: ParamLayout, call_s: float, per_op_s: float) -> np.ndarray:
        """Every figure with the parameter vector ``x`` laid out as ``lay``."""
        return self.predict_many(np.asarray(x, dtype=float)[None, :], lay, call_s, per_op_s)[0]

    def predict_many(self, xs: np.ndarray, lay: ParamLayout, call_s: float, per_op_s: float) -> np.ndarray:
        """``(B, F)``: every figure for each of the parameter vectors ``xs`` ``(B, n)`` laid out as ``lay``, in one
        pass of the realistic arithmetic (the fit's inner loop: a residual and its Jacobian's columns)."""
        e = lay.exp_many(xs)
        g, nm = len(lay.gemm), len(lay.modes)
        ratio = e[:, g + 2 * nm + 1:g + 2 * nm + 2] if lay.kernels else 1.0
        eta_g = e[:, :g][:, [lay.gemm.index(c) for c in self.classes]] if self.classes != lay.gemm else e[:, :g]
        known = np.array([c in lay.gemm for c in self.floors], bool)
        floor = np.where(known, e[:, [lay.gemm.index(c) if c in lay.gemm else 0 for c in self.floors]], np.nan)
        steps = self.parts.steps
        if lay.platforms:
            phi = e[:, [lay.platform_index + lay.platforms.index(pl) for pl in self.platforms]]
        else:
            phi = np.ones(len(self.platforms))
        calls, per_ops = lay.dispatch_many(xs, call_s, per_op_s)
        full = lambda v: np.broadcast_to(v[:, None], (len(xs), steps))  # noqa: E731
        return self.figures_from(self.efficiency(eta_g, np.minimum(eta_g * ratio, 1.0), xs[:, lay.work_half_index],
                                                 e[:, g + 2 * nm], full(e[:, g]), full(e[:, g + nm]), phi, calls,
                                                 per_ops, lay.passes, floor, np.minimum(floor * ratio, 1.0), lay.shape))

    def predict_params(self, q: Params | None) -> np.ndarray:
        """Every figure as a profile holding ``q`` predicts it (None: the ceiling)."""
        if q is None:
            return self.figures_from(None)
        eta_g = np.array([gemm_eta(q.gemm, q.kernel, c, True, q.cross)[0] for c in self.classes])
        eta_k = np.array([gemm_eta(q.gemm, q.kernel, c, False, q.cross)[0] for c in self.classes])
        attention = np.array([mode_value(q.attention, m) or 1.0 for m in self.step_mode])
        other = np.array([mode_value(q.other, m) or 1.0 for m in self.step_mode])
        phi = np.array([q.factor(pl) for pl in self.platforms])
        floor_g = np.array([gemm_eta(q.gemm, q.kernel, c, True, q.cross)[0] for c in self.floors])
        floor_k = np.array([gemm_eta(q.gemm, q.kernel, c, False, q.cross)[0] for c in self.floors])
        return self.figures_from(self.efficiency(eta_g, eta_k, q.work_half, q.memory, attention, other, phi,
                                                 q.call_s, q.per_op_s, q.passes, floor_g, floor_k, q.shape))


def predict(f: Figure, q: Params | None) -> float:
    """One figure as the realistic model with ``q`` predicts it (None: the ceiling)."""
    return float(FitTable.of([f]).predict_params(q)[0])


#: the activation quantization passes where the other passes' memory time is at the memory efficiency: their
#: vector work at its roofline, their memory time at that efficiency too
QUANTIZATION_WITH_PASSES = (
    "the activation quantization passes' vector work at its roofline (their memory time at the pass memory "
    "efficiency): not at the other passes' vector efficiency, which stands for more than the passes the model "
    "counts (on the Zen 4 guest it priced BERT-base's dynamic quantization at 19 ms, where the validate report "
    "measured 0.4 ms more non-GEMM time for dynamic INT8 than for FP32: validation/results/zen4-2vcpu-bert-base.json)")

#: priors, as extra residuals ``weight x (log eta - log prior)``: a weak pull of every efficiency towards
#: 1 (a class no figure constrains stays at its ceiling) and a firmer one of the memory efficiency towards
#: a STREAM-like 0.8 (so that slow kernels are not explained as slow memory)
PRIOR_MEMORY = (0.8, 0.3)
#: the efficiencies the fit starts from, each in turn; it keeps the lowest cost (:func:`first_best`; one start can end in a
#: local minimum: from 0.5 alone, figures made from known efficiencies fitted back with 10x their cost)
FIT_STARTS = (0.9, 0.5, 0.2)
#: a robust loss: residuals beyond about LOSS_SCALE in log (a third off) count less than squared, so that one
#: machine far from the rest (a misconfigured run, a host the platform file does not describe) does not decide
#: the profile for every other CPU
LOSS = "soft_l1"
LOSS_SCALE = 0.3


#: two forms of a profile whose leave-one-out losses (mean ``|log error|``) differ by less than this fraction of
#: the lower predict alike, and the first listed is taken. A least-squares fit stops within its tolerances of an
#: optimum, so two forms that reach the same one differ by about 1e-5 of their loss, and which of them comes out
#: lower follows the machine's exp, log and BLAS kernels (an AVX2 and an AVX-512 host chose differently). 1e-3 of a
#: mean |log error| of 0.4 is a factor of 1.0004.
TIE = 1e-3
#: the same for a fit's starts, by their cost: starts that end in one optimum differ by about 1e-10 of it, distinct
#: local optima by 1e-4 and more
START_TIE = 1e-7


def first_best(losses: Sequence[float], tie: float = TIE) -> int:
    """The index of the first of ``losses`` within ``tie`` (a fraction) of the lowest: a later choice must be
    better by more than the fit's convergence leaves between choices that reach the same optimum."""
    low = min(losses)
    return next(k for k, v in enumerate(losses) if v <= low + tie * abs(low))


def forward_jacobian(fun_many, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The Jacobian of ``fun_many`` at ``x`` by forward differences, every column from one call: ``fun_many`` maps
    ``(B, n)`` points to ``(B, m)`` values, and is given ``x`` and ``x + h_j e_j`` together. The steps are scipy's
    ``'2-point'`` ones (``least_squares``' default): ``h_j = sqrt(eps) x sign(x_j) x max(1, |x_j|)``, reversed where
    ``x + h`` leaves the bounds and still fits inside them, else the distance to the farther bound; ``dx`` is the
    difference the floats really hold."""
    n = len(x)
    h = np.finfo(float).eps ** 0.5 * np.where(x >= 0, 1.0, -1.0) * np.maximum(1.0, np.abs(x))
    h = (x + h) - x
    below, above = x - lo, hi - x
    out = (x + h < lo) | (x + h > hi)
    fits = np.abs(h) <= np.maximum(below, above)
    h = np.where(out & fits, -h, h)
    h = np.where(~fits & (above >= below), above, np.where(~fits, -below, h))
    points = np.repeat(x[None, :], n + 1, axis=0)
    points[1 + np.arange(n), np.arange(n)] += h
    values = fun_many(points)
    dx = points[1 + np.arange(n), np.arange(n)] - x
    return ((values[1:] - values[0]) / dx[:, None]).T


def class_shares(table: FitTable) -> np.ndarray:
    """``(C,)``: each path class's largest share of a step's ceiling time, over the steps its GEMM rows are in (the
    rows' ``count x max(compute, memory)`` at the ceiling over the step's ceiling time)."""
    p = table.parts
    row_t = np.asarray(p.count, dtype=float) * np.maximum(p.t_compute, p.t_memory)
    per = np.zeros((len(table.classes), p.steps))
    np.add.at(per, (table.row_class, p.row_step), row_t)
    return (per / np.maximum(np.asarray(p.ceiling_s, dtype=float), 1e-300)[None, :]).max(axis=1, initial=0.0)


def part_shares(table: FitTable, passes: bool) -> dict[str, float]:
    """Each non-GEMM part's largest share of a step's ceiling time, counting what its efficiency scales: attention
    where no measured kernel prices it (:attr:`~roofline.model.realistic.StepParts.att_kernel`); the other passes'
    vector work (``passes``: their memory time is at the memory efficiency), else the whole passes and the
    activation quantization passes (which then run at the same efficiency)."""
    p = table.parts
    ceiling = np.maximum(np.asarray(p.ceiling_s, dtype=float), 1e-300)
    attention = np.asarray(p.attention_s, dtype=float)
    if p.att_kernel is not None:
        attention = np.where(np.isfinite(p.att_kernel), 0.0, attention)
    other = (np.asarray(p.pass_compute_s, dtype=float).sum(axis=-1) if passes
             else np.asarray(p.other_s, dtype=float) + np.asarray(p.quantization_s, dtype=float))
    return {"attention": float((attention / ceiling).max(initial=0.0)), "other": float((other / ceiling).max(initial=0.0))}


def faint_parts(table: FitTable, passes: bool) -> frozenset[str]:
    """The non-GEMM parts under :data:`MIN_CLASS_SHARE` of every figure's ceiling (:func:`part_shares`)."""
    return frozenset(k for k, v in part_shares(table, passes).items() if v < MIN_CLASS_SHARE)


def fit(figs: list[Figure], dispatch: dict[str, float] | None = None, shape: ShapeForm = ShapeForm.WORK,
        call_s: float | None = None, passes: bool = False, factors: bool = False,
        held_parts: frozenset[str] | None = None) -> Params:
    """The stack parameters that best predict ``figs`` (see the module docstring); ``shape``: the shape term measured
    in work per core, in time (:func:`~roofline.model.realistic.mac_seconds`), or left out; ``call_s``: the per-call
    dispatch held at this value (chosen by other figures, the Server runs'), the per-launch one still fitted;
    ``passes``: the other non-GEMM passes' memory time at the memory efficiency (:attr:`Params.passes`); ``factors``:
    a factor per platform on its cores' efficiencies (:attr:`Params.platform`; with two platforms or more);
    ``held_parts``: the non-GEMM parts held at 1 (None: :func:`faint_parts` of ``figs``; a leave-one-out fit takes
    its stack's, decided from every figure's ceiling alone, so that its folds fit the same parameters)."""
    from scipy.optimize import least_squares

    if not figs:
        raise UserError("no figures to fit a stack profile from")
    classes = sorted({c for f in figs for s in f.steps for c in s.classes})
    modes = (ANY_MODE,)  # one efficiency per non-GEMM part, whatever its mode: the records cannot tell modes apart
    timed = shape is ShapeForm.TIME
    ms = [float(m) for f in figs for s in f.steps for m in s.parts.size(shape)]
    free = max(ms) >= WORK_SPREAD * min(ms)  # GEMMs of similar size only: the shape term cannot be fitted, it stays fixed
    d = dispatch or {}
    platforms = tuple(sorted({f.platform for f in figs}))
    plats = platforms if factors and len(platforms) > 1 else ()
    lay = ParamLayout(tuple(classes), tuple(modes), any(not s.graph for f in figs for s in f.steps), free,
                      dispatch_free="call_s" not in d, passes=passes, shape=shape, platforms=plats)
    assumed, most = (TIME_HALF_ASSUMED, TIME_HALF_MAX) if timed else (WORK_HALF_ASSUMED, WORK_HALF_MAX)
    n = lay.size
    x0 = np.zeros(n)  # the efficiencies are set per start below
    x0[lay.work_half_index] = assumed
    lo, hi = np.full(n, math.log(1e-3)), np.zeros(n)
    lo[lay.work_half_index], hi[lay.work_half_index] = 0.0, most
    for i, cls in enumerate(classes):  # a kernel table's cycles may be slower than the core really runs them
        if is_kernel_class(cls):
            hi[i] = math.log(KERNEL_MAX)
    disp = slice(lay.work_half_index + 1, lay.platform_index)
    if lay.dispatch_free:
        for i, (a, b) in zip((lay.work_half_index + 1, lay.work_half_index + 2), (CALL_S, PER_OP_S)):
            x0[i], lo[i], hi[i] = math.log(math.sqrt(a * b)), math.log(a), math.log(b)
    per_record: dict[str, int] = {}
    records_on: dict[str, set[str]] = {}
    for f in figs:
        per_record[f.record] = per_record.get(f.record, 0) + 1
        records_on.setdefault(f.platform, set()).add(f.record)
    # each platform weighs alike, and each record alike within its platform: a machine with many records
    # does not decide the profile for every other CPU
    weights = np.array([1 / math.sqrt(per_record[f.record] * len(records_on[f.platform])) for f in figs])
    measured = np.array([f.measured for f in figs])
    pull = np.full(n, PULL)
    prior = np.zeros(n)
    mem = len(classes) + 2 * len(modes)
    pull[mem], prior[mem] = PRIOR_MEMORY[1], math.log(PRIOR_MEMORY[0])
    pull[lay.work_half_index] = 0.0
    pull[disp] = 0.0
    if plats:
        i = lay.platform_index
        lo[i:], hi[i:], x0[i:] = math.log(PLATFORM_RANGE[0]), math.log(PLATFORM_RANGE[1]), 0.0
        pull[i:], prior[i:] = PLATFORM_PULL, 0.0
    if not free:
        x0[lay.work_half_index] = lo[lay.work_half_index] = hi[lay.work_half_index] = assumed
    if shape is ShapeForm.NONE:
        x0[lay.work_half_index] = lo[lay.work_half_index] = hi[lay.work_half_index] = 0.0
        lay = dataclasses.replace(lay, work_half_free=False)
    held_call = call_s is not None and lay.dispatch_free
    if held_call:
        i = lay.work_half_index + 1
        x0[i] = lo[i] = hi[i] = math.log(call_s)

    table = FitTable.of(figs, lay.gemm)
    given_call_s, given_per_op_s = d.get("call_s", 0.0), d.get("per_op_s", 0.0)  # measured ones (validate reports)
    # held at efficiency 1, not dimensions of the search: cycles timed on the core (their rate as it stands), and
    # classes too faint in every figure to be pinned (MIN_CLASS_SHARE)
    timed = np.array([is_timed_class(c) for c in classes])
    faint = (class_shares(table) < MIN_CLASS_SHARE) & ~timed
    faint_classes = frozenset(c for c, f in zip(classes, faint) if f)
    held = np.concatenate([timed | faint, np.zeros(n - len(classes), dtype=bool)])
    # a non-GEMM part too faint in every figure to be pinned, as a class: held at 1 (a free one soaks up whatever the
    # figures' other terms miss: the other passes' vector work, a fraction of a percent of a decoder step, went to
    # 0.002 in a fold, pricing norms at 500 times their roofline)
    parts_held = faint_parts(table, passes) if held_parts is None else held_parts
    g = len(classes)
    for j, part in enumerate(("attention", "other")):
        if part in parts_held:
            held[g + j * len(modes):g + (j + 1) * len(modes)] = True
    lo[held] = hi[held] = 0.0

    search = hi > lo  # a value held (work_half assumed or left out) is not a dimension of the search

    def whole(xf: np.ndarray, base: np.ndarray) -> np.ndarray:
        x = base.copy()
        x[search] = xf
        return x

    sols: list[tuple[float, np.ndarray]] = []
    lo_s, hi_s = lo[search], hi[search]
    for start in FIT_STARTS:  # the max() of compute and memory time makes the objective kinked: several starts
        x = x0.copy()
        x[:lay.work_half_index] = math.log(start)  # the efficiencies and the kernel ratio
        x[held] = 0.0

        def residuals_many(xfs: np.ndarray, base: np.ndarray = x) -> np.ndarray:
            xx = np.repeat(base[None, :], len(xfs), axis=0)
            xx[:, search] = xfs
            pred = table.predict_many(xx, lay, given_call_s, given_per_op_s)
            return np.concatenate([weights * np.log(pred / measured), pull * (xx - prior)], axis=1)

        sol = least_squares(lambda xf, f=residuals_many: f(xf[None, :])[0], x[search],
                            jac=lambda xf, f=residuals_many: forward_jacobian(f, xf, lo_s, hi_s),
                            bounds=(lo_s, hi_s), method="trf", x_scale="jac", loss=LOSS, f_scale=LOSS_SCALE)
        sols.append((sol.cost, whole(sol.x, x)))
    best_x = sols[first_best([c for c, _ in sols], START_TIE)][1]
    out = lay.params(best_x, given_call_s, given_per_op_s)
    out.held = faint_classes
    out.held_parts = parts_held
    out.call_held = held_call
    return out


def pooled_dispatch(records: Sequence[LoadedRecord]) -> dict[str, float]:
    """The median dispatch costs the records' validate reports measured."""
    ds = [r.dispatch for r in records if r.dispatch]
    if not ds:
        return {}
    return {k: statistics.median(d[k] for d in ds if k in d) for k in ("call_s", "per_op_s")}


# ------------------------------------------------------------------------------- the profile


def _time_half(q: Params, v) -> Sourced | None:
    """The profile's ``time_half_s``: the shape term in time, fitted or assumed (None: it is in work, or none)."""
    if q.shape is not ShapeForm.TIME:
        return None
    what = ("seconds of a GEMM call's multiply-accumulates on one core at its path's peak at which it reaches half its "
            "large-GEMM efficiency (the shape term in time: the stack's leave-one-platform-out figures are predicted "
            "better so than in work per core)")
    if q.work_half_fitted:
        return v(q.work_half, what)
    return Sourced(value=float(f"{q.work_half:.4g}"), kind="assumed", source=f"{what}: the records span too narrow a "
                   f"range of GEMM call times to fit it (all within {WORK_SPREAD:g}x); held at "
                   f"{WORK_HALF_ASSUMED:.0f} multiply-accumulates on a core of {CORE_OPS_PER_S:.3g} ops/s")


def _work_half(q: Params, v) -> Sourced:
    what = "multiply-accumulates per core at which a GEMM reaches half its large-GEMM efficiency"
    if q.shape is ShapeForm.TIME:
        return Sourced(value=0.0, kind="derived", source=f"{what}: none, the shape term is in time (time_half_s)")
    if q.shape_left_out:
        return v(0.0, f"{what}: none, the shape term left out (without it the stack's leave-one-platform-out "
                      "figures are predicted better)")
    if q.work_half_fitted:
        return v(q.work_half, what)
    return Sourced(value=q.work_half, kind="assumed", source=f"{what}: the records span too narrow a range of GEMM "
                   f"sizes to fit it (all within {WORK_SPREAD:g}x)")


def harness_batching(records: Sequence[LoadedRecord]) -> tuple[Sourced, Sourced | None] | None:
    """The batching of the stack's serving harness, when its Server records state one and all the same
    (``max_batch_tokens``, ``batch_watermark_tokens``); None when none states it or they differ."""
    servers = [r.record for r in records
               if r.record.scenario is Scenario.SERVER and r.record.max_batch_tokens is not None]
    stated = {(s.max_batch_tokens, s.batch_watermark_tokens) for s in servers}
    if len(stated) != 1:
        return None
    ((cap, wm),) = stated
    src = (f"the stack's serving harness, as its {len(servers)} Server records state it (each cites its source or says "
           "what it assumes)")
    return (Sourced(value=float(cap), kind="derived", source=f"tokens per batch at most: {src}"),
            Sourced(value=float(wm), kind="derived", source=f"a batch closes once it holds this many tokens: {src}")
            if wm is not None else None)


def profile_from(name: str, description: str, q: Params, records: Sequence[LoadedRecord], figs_n: int,
                 rules: Sequence[PathRule], accuracy: Accuracy | None, command: str,
                 cross: dict[str, Sourced] | None = None, kernels: str = "",
                 forms: FormChoice | None = None, shared_kv: SharedKvRule | None = None,
                 mla: MlaRule | None = None, barriers: BarrierRule | None = None,
                 unfused_attention: UnfusedAttentionRule | None = None,
                 dispatch: DispatchRule | None = None,
                 attention_kernels: Sequence[AttentionKernel] = ()) -> StackProfile:
    ids = tuple(r.id for r in records)
    src = f"fitted by `{command}` from {figs_n} figures of the {len(ids)} records listed in `records`"

    def v(x: float, what: str) -> Sourced:
        return Sourced(value=float(f"{x:.4g}"), kind="derived", source=f"{what}; {src}")

    med = lambda k: [r.dispatch[k] for r in records if r.dispatch and k in r.dispatch]  # noqa: E731
    cap, wm = harness_batching(records) or (None, None)

    def held_value(c: str) -> Sourced:
        return Sourced(value=1.0, kind="assumed", source=f"not fitted: {c}'s GEMM rows are under "
                       f"{MIN_CLASS_SHARE:.0%} of the ceiling time of every figure they are in, too small a part to be "
                       f"told apart from the rest of the figures' error: held at 1, its ceiling's rate; {src}")
    def held_part(what: str) -> Sourced:
        return Sourced(value=1.0, kind="assumed", source=f"not fitted: {what}, where this efficiency scales it, under "
                       f"{MIN_CLASS_SHARE:.0%} of the ceiling time of every figure, too small a part to be told apart "
                       f"from the rest of the figures' error: held at 1, its roofline; {src}")
    return StackProfile(
        name=name, description=description,
        gemm_efficiency={c: held_value(c) if c in q.held else
                         v(x, "the kernel table's counted compute time over the measured one (every kernel of the "
                              "engine's table)" if is_kernel_class(c) else
                              "GEMM compute time at the ceiling over the measured one, in a compiled model")
                         for c, x in sorted(q.gemm.items()) if not is_timed_class(c)},
        kernel_efficiency={c: held_value(c) if c in q.held else
                           v(x, f"one linear compiled and called on its own: {q.kernel_ratio:.3g} x the in-model "
                                "efficiency") for c, x in sorted(q.kernel.items()) if not is_timed_class(c)},
        work_half=_work_half(q, v),
        time_half_s=_time_half(q, v),
        memory_efficiency=v(q.memory, "memory-bound GEMMs: the ceiling's memory time over the measured one"),
        pass_memory_efficiency=v(q.memory, "the other non-GEMM passes' memory time, at the memory-bound GEMMs' "
                                 "efficiency (their vector work at other-<mode>'s): the stack's leave-one-platform-out "
                                 "figures are predicted better so than with each whole pass at other-<mode>'s")
        if q.passes else None,
        non_gemm_efficiency={**{f"attention-{m}": held_part("attention") if "attention" in q.held_parts else
                                v(x, "attention at its ceiling over measured") for m, x in q.attention.items()},
                             **{f"other-{m}": held_part("norms, activations and residual adds") if "other" in q.held_parts
                                else v(x, "norms, activations, residual adds: their vector work at the ceiling "
                                          "over measured (their memory time at pass_memory_efficiency)"
                                       if q.passes else "norms, activations, residual adds and quantization "
                                       "passes at their ceiling over measured") for m, x in q.other.items()}},
        cross_stack_gemm_efficiency=dict(sorted((cross or {}).items())),
        quantization_efficiency=Sourced(value=1.0, kind="assumed", source=QUANTIZATION_WITH_PASSES)
        if q.passes else None,
        call_s=v(q.call_s, "dispatch per call of the engine (each instance pays its own), chosen by the MLPerf "
                 "Server runs' rate, p50 and p99 as the plan predicts them (leave-one-platform-out), the other values "
                 "fitted with it: the step figures' calls are all of about one size, so they cannot tell a cost per "
                 "call from the per-token work") if q.call_held else
        v(q.call_s, "dispatch per call of the engine (each instance pays its own), fitted") if q.dispatch_fitted else
        Sourced(value=float(f"{q.call_s:.4g}"), kind="measured", source=f"dispatch per call of the engine, held in "
                f"the fit: {dispatch.evidence}") if dispatch is not None else
        Sourced(value=float(f"{q.call_s:.4g}"), kind="measured", source=f"median of {len(med('call_s'))} validate "
                f"reports' compiled-graph call; {src}") if med("call_s") else None,
        per_op_s=v(q.per_op_s, "dispatch per GEMM launch, fitted") if q.dispatch_fitted else
        Sourced(value=float(f"{q.per_op_s:.4g}"), kind="measured", source="dispatch per GEMM launch, held in the fit "
                "(the stack's [dispatch])") if dispatch is not None else
        Sourced(value=float(f"{q.per_op_s:.4g}"), kind="measured", source=f"median of "
                f"{len(med('per_op_s'))} validate reports' per-GEMM launch; {src}") if med("per_op_s") else None,
        platform_factors={k: v(x, f"{k}'s cores against the classes (its real clock and share of the host)")
                          for k, x in sorted(q.platform.items())},
        path_rules=tuple(rules), kernels=kernels, shared_kv=shared_kv, mla=mla, barriers=barriers,
        unfused_attention=unfused_attention, dispatch=dispatch, attention_kernels=tuple(attention_kernels),
        records=ids, accuracy=accuracy,
        forms=forms, max_batch_tokens=cap,
        batch_watermark_tokens=wm,
        notes=() if q.passes else
        ("the activation quantization passes run at the 'other' efficiency of their non-GEMM mode",),
    )


def params_of(profile: StackProfile) -> Params:
    gemm = bare_values(profile.gemm_efficiency)
    ratios = [profile.kernel_efficiency[k].value / v for k, v in gemm.items() if k in profile.kernel_efficiency]
    return Params(
        gemm=gemm, kernel_ratio=statistics.median(ratios) if ratios else 1.0,
        kernel_table=bare_values(profile.kernel_efficiency),
        work_half=profile.shape[1], shape=profile.shape[0],
        memory=profile.memory_efficiency.value if profile.memory_efficiency else 1.0,
        attention={k.split("-", 1)[1]: v.value for k, v in profile.non_gemm_efficiency.items() if k.startswith("attention-")},
        other={k.split("-", 1)[1]: v.value for k, v in profile.non_gemm_efficiency.items() if k.startswith("other-")},
        call_s=profile.call_s.value if profile.call_s else 0.0, per_op_s=profile.per_op_s.value if profile.per_op_s else 0.0,
        platform=bare_values(profile.platform_factors),
        passes=profile.pass_memory_efficiency is not None,
        cross=bare_values(profile.cross_stack_gemm_efficiency),
    )
