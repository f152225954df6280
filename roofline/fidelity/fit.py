"""How right the model is: every measurement record against the ceiling and the realistic estimate,
software-stack profiles fitted from the records, and the error a user predicting an unseen CPU
should expect (leave-one-platform-out: the profile refitted without the record's platform).

A record's figure becomes :class:`Parts`: the pieces of the realistic model for its step with the
efficiencies left out (per GEMM row: calls, compute and memory time at the ceiling, path class and
M; attention and other non-GEMM time; the priced quantization and compensation; GEMM launches).
The fit evaluates those pieces directly for each parameter vector (fast); the figures reported are
the realistic model's own (:func:`roofline.model.realistic.realistic_step` with the fitted
profile), and the tests check that both agree.

The fit: least squares, in log space, of ``log(predicted / measured)`` over the figures (each record
weighted alike: ``1 / sqrt(its figures)``), with a weak pull of every efficiency towards 1 so that a
class no figure constrains stays at its ceiling; bounds ``0.001 <= eta <= 1``, ``0 <= m_half <= 512``.
A class the training records never use takes the profile's fallback at prediction time.

Each record platform gets a factor on its cores' efficiencies (its real clock against the datasheet's,
a VM's share of the host): the classes then carry what is common to the stack. A platform the
records do not have gets the factors' geometric mean, the typical platform: the factors and the
efficiencies share one scale, which the weak pulls towards 1 fix only loosely, and the geometric mean
does not depend on it (a left-out platform at factor 1 did: its error followed where the optimizer
put the common level).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from roofline.catalog import load_model, load_platform
from roofline.catalog.records import LoadedRecord
from roofline.errors import SpecError, UnknownNameError, UserError
from roofline.model.efficiency import from_stack, gemm_eta, mode_value, path_class
from roofline.model.estimate import evaluate
from roofline.model.harness import encoder_run, host_resources, shape_run
from roofline.model.realistic import UNFITTED, TermName, gemm_seconds, realistic_step
from roofline.model.step import GemmEval
from roofline.results.validate import RECIPE_OF
from roofline.spec.precision import get_recipe
from roofline.spec.sourced import Sourced
from roofline.spec.stack import Accuracy, PathRule, StackProfile, typical_factor

#: ceilings are compared with measurements of performance (time or throughput); a speedup above the
#: ratio of two ceilings is possible when the baseline runs further below its own
ABSOLUTE = ("latency", "gemm", "throughput", "tokens_per_s")
#: the absolute figures that are rates (higher is faster); the others are times
RATES = ("throughput", "tokens_per_s")
#: the figures that compare two precisions
RATIOS = ("speedup", "linear_speedup", "non_gemm_speedup")
PULL = 0.02
PULL_PLATFORM = PULL  # only to fix the scale a class and a platform factor share: as weak as the rest
ANY_MODE = "any"
#: the shape term's rows when the figures cannot tell (all at similar M): assumed, stated in the profile
M_HALF_ASSUMED = 8.0
M_HALF_MAX = 512.0


@dataclass(frozen=True)
class Parts:
    """One step's realistic time with the efficiencies left out."""

    gemm: GemmEval
    """the step's GEMM rows at the ceiling (calls, compute and memory time)"""
    classes: tuple[str, ...]
    factor: np.ndarray
    """the path rule's peak ratio per row"""
    m: np.ndarray
    attention_s: float
    other_s: float
    mode: str
    quant_s: float
    """activation quantization at efficiency 1"""
    fixed_s: float
    """compensation"""
    launches: float
    graph: bool
    ceiling_s: float


@dataclass(frozen=True)
class Figure:
    record: str
    platform: str
    stack: str
    kind: str
    precision: str
    baseline: str | None
    label: str
    measured: float
    parts: tuple[Parts, ...]
    """one step (latency, gemm, throughput) or two (baseline, new: speedups)"""
    batch: int = 1
    tokens: float = 1.0
    """tokens per step (tokens_per_s figures)"""


@dataclass
class Params:
    """A profile's fitted values as the fit sees them."""

    gemm: dict[str, float] = field(default_factory=dict)
    """compute efficiency per path class, in a compiled model"""
    kernel_ratio: float = 1.0
    """one linear called on its own reaches this times the in-model efficiency"""
    m_half: float = 0.0
    memory: float = 1.0
    attention: dict[str, float] = field(default_factory=dict)
    other: dict[str, float] = field(default_factory=dict)
    """norms, activations, residual adds and the quantization passes, per mode"""
    call_s: float = 0.0
    per_op_s: float = 0.0
    m_half_fitted: bool = False
    platform: dict[str, float] = field(default_factory=dict)
    """per record platform: how much faster (>1) or slower its cores ran than the profile's classes say
    (its clock against the datasheet's, a VM's share); an unseen platform gets their geometric mean"""

    kernel_table: dict[str, float] | None = None
    """a profile's own kernel efficiencies (as stored, rounded), instead of the ratio times the GEMM ones"""

    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    """the lookups below, once per instance (the fit builds one Params per evaluation of every figure)"""

    @property
    def kernel(self) -> dict[str, float]:
        if self.kernel_table is not None:
            return self.kernel_table
        if "kernel" not in self._memo:
            self._memo["kernel"] = {k: min(v * self.kernel_ratio, 1.0) for k, v in self.gemm.items()}
        return self._memo["kernel"]

    def eta(self, cls: str, graph: bool) -> float:
        """:func:`gemm_eta` of a class, in a compiled model or called alone"""
        key = ("eta", cls, graph)
        if key not in self._memo:
            self._memo[key] = gemm_eta(self.gemm, self.kernel, cls, graph)[0]
        return self._memo[key]

    def factor(self, platform: str) -> float:
        """a platform's factor; an unseen one's: :func:`typical_factor`"""
        key = ("platform", platform)
        if key not in self._memo:
            self._memo[key] = self.platform[platform] if platform in self.platform else typical_factor(self.platform)
        return self._memo[key]

    def mode(self, part: str, mode: str) -> float:
        """:func:`mode_value` of attention or other in a mode (1 when not fitted)"""
        key = (part, mode)
        if key not in self._memo:
            self._memo[key] = mode_value(getattr(self, part), mode) or 1.0
        return self._memo[key]


def parts_time(p: Parts, q: Params | None, part: str = "all", platform: str = "") -> float:
    """The realistic model's time of one step from its pieces (what realistic_step computes with a stack
    profile holding ``q``; None: the ceiling); ``part``: all, linear (the GEMM kernels and their epilogue)
    or non_gemm."""
    if q is None:
        linear = float((p.gemm.count * p.gemm.time).sum())
        return {"linear": linear, "non_gemm": p.ceiling_s - linear, "all": p.ceiling_s}[part]
    phi = q.factor(platform)
    eta = np.array([q.eta(c, p.graph) for c in p.classes]) * p.factor
    shape = p.m / (p.m + q.m_half) if q.m_half > 0 else 1.0
    eta = np.minimum(eta * shape * phi, 1.0)
    linear = gemm_seconds(p.gemm, eta, q.memory, shape) + p.fixed_s
    if part == "linear":
        return linear
    vec = min(q.mode("other", p.mode) * phi, 1.0)
    att = min(q.mode("attention", p.mode) * phi, 1.0)
    non = p.attention_s / att + (p.other_s + p.quant_s) / vec
    non += q.call_s + p.launches * q.per_op_s
    return non if part == "non_gemm" else linear + non


def predict(f: Figure, q: Params | None) -> float:
    """The figure as the realistic model with ``q`` predicts it (None: the ceiling)."""
    if f.kind in ("speedup", "linear_speedup", "non_gemm_speedup"):
        part = {"speedup": "all", "linear_speedup": "linear", "non_gemm_speedup": "non_gemm"}[f.kind]
        base, new = (parts_time(p, q, part, f.platform) for p in f.parts)
        return base / new
    t = parts_time(f.parts[0], q, "all", f.platform)
    if f.kind == "gemm_share":
        return parts_time(f.parts[0], q, "linear", f.platform) / t
    if f.kind == "throughput":
        return f.batch / t
    if f.kind == "tokens_per_s":
        return f.tokens / t
    return t


# ------------------------------------------------------------------------------- figures of a record


def figures(rec: LoadedRecord, rules: Sequence[PathRule] = ()) -> list[Figure]:
    """Every measured figure of a record, with the pieces the model predicts it from."""
    r = rec.record
    try:
        platform = load_platform(r.platform.name)
    except UnknownNameError as e:
        raise SpecError(str(rec.path), "platform.name", str(e)) from None
    try:
        spec = load_model(r.model)
    except UnknownNameError as e:
        raise SpecError(str(rec.path), "model", str(e)) from None
    if r.layers:
        spec = dataclasses.replace(spec, num_hidden_layers=r.layers, measured=())
    else:
        spec = dataclasses.replace(spec, measured=())
    stack = StackProfile(name="rules", description="", gemm_efficiency={}, m_half=Sourced(value=0, kind="assumed",
                         source="-"), path_rules=tuple(rules))
    out = []
    cache: dict[tuple, tuple[Parts, ...]] = {}
    for m in rec.measurements:
        key = (m.kind, m.precision, m.baseline, m.non_gemm_mode, m.m, m.n, m.k, m.phase, m.seq_len, m.context,
               m.kv_dtype)
        if key not in cache:
            cache[key] = _parts_for(r, platform, spec, m, stack)
        label = (f"{m.name} {m.m}x{m.n}x{m.k}" if m.kind == "gemm" else m.name if m.name else
                 f"{m.kind.replace('_', ' ')} vs {m.baseline}" if m.baseline else m.kind)
        phase = m.phase or r.phase
        tokens = r.batch * (1 if phase == "decode" else (m.seq_len or r.seq_len))
        out.append(Figure(rec.id, r.platform.name, r.stack, m.kind, m.precision, m.baseline, label, m.value,
                          cache[key], r.batch, tokens))
    return out


def _parts_for(r, platform, spec, m, stack: StackProfile) -> tuple[Parts, ...]:
    cores = r.platform.cores
    if m.kind in ("latency", "gemm") and r.platform.instance_cores is None:
        # a single process on every core used (validate's harness)
        if m.kind == "gemm":
            h = shape_run(platform, m.precision, m.name or "gemm", m.m, m.n, m.k, cores=cores,
                          sockets=r.platform.sockets)
        else:
            h = encoder_run(platform, spec, m.precision, spec.num_hidden_layers, r.batch, r.seq_len,
                            m.non_gemm_mode or get_recipe(RECIPE_OF.get(m.precision, m.precision)).non_gemm_mode,
                            cores=cores, embeddings=r.embeddings)
        return (_parts(h.res, h.recipe, [h.recipe] * len(h.gemms), h.gemms, h.step, h.mode, m.kind != "gemm", stack),)
    names = [m.baseline, m.precision] if m.baseline else [m.precision]
    ev = evaluate(platform, spec, precisions=names, baseline=names[0], batch=r.batch, seq_len=m.seq_len or r.seq_len,
                  phase=m.phase or r.phase, context=m.context if m.context is not None else r.context,
                  sockets=r.platform.sockets, cores=cores, kv_dtype=m.kv_dtype, quantize_lm_head=r.quantize_lm_head,
                  instance_cores=r.platform.instance_cores or (cores if m.kind == "tokens_per_s" else None))
    return tuple(_parts(ev.res, e.recipe, e.cells, ev.gemms, e.step, e.recipe.non_gemm_mode, True, stack)
                 for e in ev.evaluated)


def _parts(res, recipe, cells, gemms, step, mode: str, graph: bool, stack: StackProfile) -> Parts:
    classes, factor = zip(*(path_class(res, c, stack) for c in cells))
    base = realistic_step(res, recipe, gemms, step, mode=mode, eff=UNFITTED, graph=graph)
    g = step.gemm
    return Parts(gemm=g,
                 classes=tuple(classes), factor=np.asarray(factor), m=np.asarray(gemms.m, dtype=float),
                 attention_s=base.attention_s, other_s=base.other_s, mode=mode,
                 quant_s=base.seconds(TermName.ACTIVATION_QUANTIZATION), fixed_s=base.seconds(TermName.COMPENSATION),
                 launches=float(np.sum(gemms.count)), graph=graph, ceiling_s=base.ceiling_s)


# ------------------------------------------------------------------------------- the fit


@dataclass(frozen=True)
class Layout:
    """Where each fitted value sits in the parameter vector (all in log space but m_half)."""

    gemm: tuple[str, ...]
    modes: tuple[str, ...]
    kernels: bool
    """isolated linears among the figures: fit the kernel ratio"""
    platforms: tuple[str, ...] = ()
    m_half_free: bool = True

    @property
    def size(self) -> int:
        return len(self.gemm) + 2 * len(self.modes) + 3 + len(self.platforms)

    @property
    def m_half_index(self) -> int:
        return len(self.gemm) + 2 * len(self.modes) + 2

    def params(self, x: np.ndarray, call_s: float, per_op_s: float) -> Params:
        e = np.exp(x)
        g, nm = len(self.gemm), len(self.modes)
        return Params(gemm=dict(zip(self.gemm, e[:g])), attention=dict(zip(self.modes, e[g:g + nm])),
                      other=dict(zip(self.modes, e[g + nm:g + 2 * nm])), memory=float(e[g + 2 * nm]),
                      kernel_ratio=float(e[g + 2 * nm + 1]) if self.kernels else 1.0,
                      m_half=float(x[self.m_half_index]), call_s=call_s, per_op_s=per_op_s,
                      platform=dict(zip(self.platforms, e[self.m_half_index + 1:])), m_half_fitted=self.m_half_free)


@dataclass(frozen=True)
class FitTable:
    """Every figure's pieces flattened into arrays, so that the fit predicts all figures in one vectorised
    pass per parameter vector (the same arithmetic as :func:`predict` with ``lay.params(x)``; a test
    checks that both agree)."""

    lay: Layout
    row_part: np.ndarray
    row_class: np.ndarray
    row_graph: np.ndarray
    row_factor: np.ndarray
    row_m: np.ndarray
    row_count: np.ndarray
    row_tc: np.ndarray
    row_te: np.ndarray
    row_tm: np.ndarray
    part_platform: np.ndarray
    part_attention: np.ndarray
    part_vector: np.ndarray
    """other non-GEMM time plus the quantization passes (both at the 'other' efficiency)"""
    part_fixed: np.ndarray
    part_launches: np.ndarray
    num_which: np.ndarray
    """per figure: numerator's piece (0 all, 1 linear, 2 non-GEMM; -1 the constant ``num_const``)"""
    num_part: np.ndarray
    num_const: np.ndarray
    den_which: np.ndarray
    """denominator's piece (-1: none)"""
    den_part: np.ndarray

    @classmethod
    def of(cls, figs: Sequence[Figure], lay: Layout) -> FitTable:
        rows: dict[str, list] = {k: [] for k in ("part", "class", "graph", "factor", "m", "count", "tc", "te", "tm")}
        parts: dict[str, list] = {k: [] for k in ("platform", "attention", "vector", "fixed", "launches")}
        fig: dict[str, list] = {k: [] for k in ("nw", "np", "nc", "dw", "dp")}
        which = {"speedup": 0, "linear_speedup": 1, "non_gemm_speedup": 2}
        for f in figs:
            first = len(parts["platform"])
            for p in f.parts:
                j = len(parts["platform"])
                n = len(p.classes)
                rows["part"] += [j] * n
                rows["class"] += [lay.gemm.index(c) for c in p.classes]
                rows["graph"] += [p.graph] * n
                rows["factor"] += list(np.broadcast_to(p.factor, (n,)))
                rows["m"] += list(np.broadcast_to(p.m, (n,)))
                for k, a in (("count", p.gemm.count), ("tc", p.gemm.t_compute), ("te", p.gemm.t_extra),
                             ("tm", p.gemm.t_memory)):
                    rows[k] += list(np.broadcast_to(a, (n,)))
                parts["platform"].append(lay.platforms.index(f.platform))
                parts["attention"].append(p.attention_s)
                parts["vector"].append(p.other_s + p.quant_s)
                parts["fixed"].append(p.fixed_s)
                parts["launches"].append(p.launches)
            if f.kind in which:
                w = which[f.kind]
                fig["nw"].append(w), fig["np"].append(first), fig["nc"].append(1.0)
                fig["dw"].append(w), fig["dp"].append(first + 1)
            elif f.kind == "gemm_share":
                fig["nw"].append(1), fig["np"].append(first), fig["nc"].append(1.0)
                fig["dw"].append(0), fig["dp"].append(first)
            elif f.kind in ("throughput", "tokens_per_s"):
                fig["nw"].append(-1), fig["np"].append(first)
                fig["nc"].append(float(f.batch if f.kind == "throughput" else f.tokens))
                fig["dw"].append(0), fig["dp"].append(first)
            else:
                fig["nw"].append(0), fig["np"].append(first), fig["nc"].append(1.0)
                fig["dw"].append(-1), fig["dp"].append(first)
        a = lambda v, t=float: np.asarray(v, dtype=t)  # noqa: E731
        return cls(lay, a(rows["part"], int), a(rows["class"], int), a(rows["graph"], bool), a(rows["factor"]),
                   a(rows["m"]), a(rows["count"]), a(rows["tc"]), a(rows["te"]), a(rows["tm"]),
                   a(parts["platform"], int), a(parts["attention"]), a(parts["vector"]), a(parts["fixed"]),
                   a(parts["launches"]), a(fig["nw"], int), a(fig["np"], int), a(fig["nc"]), a(fig["dw"], int),
                   a(fig["dp"], int))

    def predict(self, x: np.ndarray, call_s: float, per_op_s: float) -> np.ndarray:
        """Every figure as :func:`predict` gives it with ``self.lay.params(x, call_s, per_op_s)``."""
        lay = self.lay
        e = np.exp(x)
        g, nm = len(lay.gemm), len(lay.modes)
        attention, other, memory = e[g], e[g + nm], e[g + 2 * nm]
        ratio = e[g + 2 * nm + 1] if lay.kernels else 1.0
        m_half = x[lay.m_half_index]
        phi_part = e[lay.m_half_index + 1:][self.part_platform]
        eta = e[:g][self.row_class]
        eta = np.where(self.row_graph, eta, np.minimum(eta * ratio, 1.0)) * self.row_factor
        shape = self.row_m / (self.row_m + m_half) if m_half > 0 else np.ones_like(self.row_m)
        eta = np.minimum(eta * shape * phi_part[self.row_part], 1.0)
        eta_x = np.minimum(eta / shape, 1.0)
        t_c = (self.row_tc - self.row_te) / eta + self.row_te / eta_x
        row = self.row_count * np.maximum(t_c, self.row_tm / memory)
        linear = np.bincount(self.row_part, row, minlength=len(self.part_platform)) + self.part_fixed
        non = (self.part_attention / np.minimum(attention * phi_part, 1.0)
               + self.part_vector / np.minimum(other * phi_part, 1.0) + call_s + self.part_launches * per_op_s)
        pieces = np.stack([linear + non, linear, non])
        num = np.where(self.num_which < 0, self.num_const, pieces[np.maximum(self.num_which, 0), self.num_part])
        den = np.where(self.den_which < 0, 1.0, pieces[np.maximum(self.den_which, 0), self.den_part])
        return num / den


#: priors, as extra residuals ``weight x (log eta - log prior)``: a weak pull of every efficiency towards
#: 1 (a class no figure constrains stays at its ceiling) and a firmer one of the memory efficiency towards
#: a STREAM-like 0.8 (so that slow kernels are not explained as slow memory)
PRIOR_MEMORY = (0.8, 0.3)
#: the efficiencies the fit starts from, each in turn; it keeps the lowest cost (one start can end in a
#: local minimum: from 0.5 alone, figures made from known efficiencies fitted back with 10x their cost)
FIT_STARTS = (0.9, 0.5, 0.2)


def fit(figs: list[Figure], dispatch: dict[str, float] | None = None) -> Params:
    """The stack parameters that best predict ``figs`` (see the module docstring)."""
    from scipy.optimize import least_squares

    if not figs:
        raise UserError("no figures to fit a stack profile from")
    classes = sorted({c for f in figs for p in f.parts for c in p.classes})
    modes = (ANY_MODE,)  # one efficiency per non-GEMM part, whatever its mode: the records cannot tell modes apart
    platforms = tuple(sorted({f.platform for f in figs}))
    ms = [float(m) for f in figs for p in f.parts for m in p.m]
    free = max(ms) >= 4 * min(ms)  # figures at similar M only: the shape term cannot be fitted, it stays fixed
    lay = Layout(tuple(classes), tuple(modes), any(not p.graph for f in figs for p in f.parts), platforms, free)
    d = dispatch or {}
    n = lay.size
    x0 = np.zeros(n)  # the efficiencies are set per start below
    x0[lay.m_half_index] = 16.0
    lo, hi = np.full(n, math.log(1e-3)), np.zeros(n)
    lo[lay.m_half_index], hi[lay.m_half_index] = 0.0, M_HALF_MAX
    plat = slice(lay.m_half_index + 1, n)
    x0[plat], lo[plat], hi[plat] = 0.0, math.log(0.1), math.log(10.0)  # platform factors: 0.1 to 10
    per_record: dict[str, int] = {}
    for f in figs:
        per_record[f.record] = per_record.get(f.record, 0) + 1
    weights = np.array([1 / math.sqrt(per_record[f.record]) for f in figs])
    measured = np.array([f.measured for f in figs])
    pull = np.full(n, PULL)
    prior = np.zeros(n)
    mem = len(classes) + 2 * len(modes)
    pull[mem], prior[mem] = PRIOR_MEMORY[1], math.log(PRIOR_MEMORY[0])
    pull[lay.m_half_index] = 0.0
    pull[plat] = PULL_PLATFORM  # their geometric mean stays near 1: the classes carry the common level
    if not free:
        x0[lay.m_half_index] = lo[lay.m_half_index] = M_HALF_ASSUMED
        hi[lay.m_half_index] = M_HALF_ASSUMED + 1e-9

    table = FitTable.of(figs, lay)
    call_s, per_op_s = d.get("call_s", 0.0), d.get("per_op_s", 0.0)

    def residuals(x: np.ndarray) -> np.ndarray:
        pred = table.predict(x, call_s, per_op_s)
        return np.concatenate([weights * np.log(pred / measured), pull * (x - prior)])

    best = None
    for start in FIT_STARTS:  # the max() of compute and memory time makes the objective kinked: several starts
        x = x0.copy()
        x[:lay.m_half_index] = math.log(start)
        sol = least_squares(residuals, x, bounds=(lo, hi), method="trf", x_scale="jac")
        if best is None or sol.cost < best.cost:
            best = sol
    return lay.params(best.x, d.get("call_s", 0.0), d.get("per_op_s", 0.0))


def pooled_dispatch(records: Sequence[LoadedRecord]) -> dict[str, float]:
    """The median dispatch costs the records' validate reports measured."""
    ds = [r.dispatch for r in records if r.dispatch]
    if not ds:
        return {}
    return {k: statistics.median(d[k] for d in ds if k in d) for k in ("call_s", "per_op_s")}


# ------------------------------------------------------------------------------- the profile


def profile_from(name: str, description: str, q: Params, records: Sequence[LoadedRecord], figs_n: int,
                 rules: Sequence[PathRule], accuracy: Accuracy | None, command: str) -> StackProfile:
    ids = tuple(r.id for r in records)
    src = f"fitted by `{command}` from {figs_n} figures of the {len(ids)} records listed in `records`"

    def v(x: float, what: str) -> Sourced:
        return Sourced(value=float(f"{x:.4g}"), kind="derived", source=f"{what}; {src}")

    med = lambda k: [r.dispatch[k] for r in records if r.dispatch and k in r.dispatch]  # noqa: E731
    return StackProfile(
        name=name, description=description,
        gemm_efficiency={c: v(x, "GEMM compute time at the ceiling over the measured one, in a compiled model")
                         for c, x in sorted(q.gemm.items())},
        kernel_efficiency={c: v(x, f"one linear compiled and called on its own: {q.kernel_ratio:.3g} x the in-model "
                                   "efficiency") for c, x in sorted(q.kernel.items())},
        m_half=v(q.m_half, "rows at which a GEMM reaches half its large-M efficiency") if q.m_half_fitted else
        Sourced(value=q.m_half, kind="assumed", source="rows at which a GEMM reaches half its large-M efficiency: "
                "the records span too narrow a range of M to fit it (all within 4x)"),
        memory_efficiency=v(q.memory, "memory-bound GEMMs: the ceiling's memory time over the measured one"),
        non_gemm_efficiency={**{f"attention-{m}": v(x, "attention at its ceiling over measured") for m, x in q.attention.items()},
                             **{f"other-{m}": v(x, "norms, activations, residual adds and quantization passes at their "
                                                   "ceiling over measured") for m, x in q.other.items()}},
        quantization_efficiency=None,
        call_s=Sourced(value=float(f"{q.call_s:.4g}"), kind="measured", source=f"median of {len(med('call_s'))} validate "
                       f"reports' compiled-graph call; {src}") if med("call_s") else None,
        per_op_s=Sourced(value=float(f"{q.per_op_s:.4g}"), kind="measured", source=f"median of "
                         f"{len(med('per_op_s'))} validate reports' per-GEMM launch; {src}") if med("per_op_s") else None,
        platform_factors={k: v(x, f"{k}'s cores against the classes (its real clock and share of the host)")
                          for k, x in sorted(q.platform.items())},
        path_rules=tuple(rules), records=ids, accuracy=accuracy,
        notes=("the activation quantization passes run at the 'other' efficiency of their non-GEMM mode",),
    )


def params_of(profile: StackProfile) -> Params:
    gemm = {k: v.value for k, v in profile.gemm_efficiency.items()}
    ratios = [profile.kernel_efficiency[k].value / v for k, v in gemm.items() if k in profile.kernel_efficiency]
    return Params(
        gemm=gemm, kernel_ratio=statistics.median(ratios) if ratios else 1.0,
        kernel_table={k: v.value for k, v in profile.kernel_efficiency.items()},
        m_half=profile.m_half.value, memory=profile.memory_efficiency.value if profile.memory_efficiency else 1.0,
        attention={k.split("-", 1)[1]: v.value for k, v in profile.non_gemm_efficiency.items() if k.startswith("attention-")},
        other={k.split("-", 1)[1]: v.value for k, v in profile.non_gemm_efficiency.items() if k.startswith("other-")},
        call_s=profile.call_s.value if profile.call_s else 0.0, per_op_s=profile.per_op_s.value if profile.per_op_s else 0.0,
        platform={k: v.value for k, v in profile.platform_factors.items()},
    )


# ------------------------------------------------------------------------------- leave one platform out


@dataclass(frozen=True)
class Scored:
    figure: Figure
    ceiling: float
    realistic: float | None
    """leave-one-platform-out; None for a stack without a profile"""
    realistic_in_sample: float | None

    @property
    def error(self) -> float | None:
        return None if self.realistic is None else self.realistic / self.figure.measured - 1

    @property
    def ceiling_error(self) -> float:
        return self.ceiling / self.figure.measured - 1

    @property
    def violation(self) -> bool:
        """a measured performance above the ceiling's"""
        if self.figure.kind not in ABSOLUTE:
            return False
        faster = self.figure.measured > self.ceiling if self.figure.kind in RATES else \
            self.figure.measured < self.ceiling
        return bool(faster) and abs(self.ceiling / self.figure.measured - 1) > 1e-9


def leave_one_platform_out(figs: list[Figure], dispatch: dict[str, float]) -> tuple[Params, dict[str, Params]]:
    """The profile fitted on every figure, and one refitted without each platform."""
    full = fit(figs, dispatch)
    per = {}
    for platform in sorted({f.platform for f in figs}):
        train = [f for f in figs if f.platform != platform]
        per[platform] = fit(train, dispatch) if train else Params()
    return full, per


def score(figs: list[Figure], full: Params | None, per: dict[str, Params] | None) -> list[Scored]:
    return [Scored(f, predict(f, None), predict(f, per[f.platform]) if per else None,
                   predict(f, full) if full else None) for f in figs]


def summary(scored: list[Scored], command: str) -> Accuracy:
    errs = [abs(s.error) for s in scored if s.error is not None]
    return Accuracy(median_abs_error=float(f"{statistics.median(errs):.4g}") if errs else 0.0,
                    worst_abs_error=float(f"{max(errs):.4g}") if errs else 0.0, figures=len(errs),
                    records=len({s.figure.record for s in scored if s.error is not None}),
                    platforms=len({s.figure.platform for s in scored if s.error is not None}), command=command)


__all__ = ["Figure", "Params", "Scored", "figures", "fit", "leave_one_platform_out", "params_of", "predict",
           "profile_from", "score", "summary", "from_stack", "host_resources"]
