"""The realistic model: the ceiling of a step plus named terms, one implementation for estimate,
check, calibrate and plan.

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

Efficiencies are capped at 1: the ceiling bounds every real run, so a fitted value above 1 says the
ceiling's inputs are off (a violation to report), not that a kernel beats it. Hence
``realistic >= ceiling``, with equality when nothing is fitted and every term is zero.

The fitted values come in one typed container, :class:`Efficiency`, from a host calibration
(``roofline calibrate``) or a software-stack profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

from roofline.calc.levels import level_bandwidth, level_of
from roofline.calc.shapes import GemmList
from roofline.model.resources import Resources
from roofline.model.step import GemmEval, StepEval
from roofline.spec.op_costs import cost
from roofline.spec.precision import PrecisionRecipe
from roofline.units import DTYPE_BYTES


class TermName(str, Enum):
    ACTIVATION_QUANTIZATION = "activation quantization"
    SMOOTHING = "smoothing"
    COMPENSATION = "u8 shift and compensation"
    POST_OPS = "unfused post-ops"
    DISPATCH = "dispatch"
    GEMM_EFFICIENCY = "GEMM kernel efficiency"
    ATTENTION_EFFICIENCY = "attention efficiency"
    OTHER_EFFICIENCY = "other non-GEMM efficiency"


#: the terms that belong to the linear block (the GEMM kernels' own time)
LINEAR_BLOCK_TERMS = (TermName.COMPENSATION, TermName.GEMM_EFFICIENCY)
#: the efficiency terms: they scale a part of the ceiling
EFFICIENCY_TERMS = (TermName.GEMM_EFFICIENCY, TermName.ATTENTION_EFFICIENCY, TermName.OTHER_EFFICIENCY)


@dataclass(frozen=True)
class Term:
    name: TermName
    seconds: float
    how: str
    calibrated: bool = False


@dataclass(frozen=True)
class Efficiency:
    """Fitted efficiencies of one precision in one non-GEMM mode (1 and 0 s: not fitted)."""

    gemm: float | np.ndarray = 1.0
    """GEMMs inside a compiled model: compute efficiency, one value or one per GEMM row"""
    kernel: float | np.ndarray = 1.0
    """one linear compiled and called on its own"""
    shape: float | np.ndarray = 1.0
    """the shape term ``M / (M + m_half)`` of each GEMM row, already in ``gemm`` and ``kernel``: it
    scales the multiply-accumulates only, the extra vector work (dequantization) runs at the
    efficiency without it"""
    memory: float | None = None
    """memory-bound GEMMs: the ceiling's memory time over the real one (None: the compute efficiency's)"""
    attention: float = 1.0
    other: float = 1.0
    """norms, activations, residual adds"""
    quantization: float = 1.0
    """the activation quantization kernels inside a compiled model"""
    kernel_quantization: float = 1.0
    """the standalone quantize of one linear called on its own"""
    call_s: float = 0.0
    """one call of a compiled graph"""
    per_op_s: float = 0.0
    """each GEMM launch inside a compiled graph"""
    source: str = ""
    """where the values come from (a calibration file, a stack profile)"""
    fitted: frozenset[str] = field(default_factory=frozenset)
    """which of the fields were fitted (the others are defaults)"""

    def capped(self) -> "Efficiency":
        """Every efficiency at most 1 (see the module docstring)."""
        keys = ("gemm", "kernel", "attention", "other", "quantization", "kernel_quantization")
        out = {k: np.minimum(getattr(self, k), 1.0) for k in keys}
        if self.memory is not None:
            out["memory"] = min(self.memory, 1.0)
        return replace(self, **out)


UNFITTED = Efficiency()


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
        return 1.0 + self.seconds(TermName.GEMM_EFFICIENCY) / self.gemm_s if self.gemm_s > 0 else 1.0

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
        scale = {TermName.GEMM_EFFICIENCY: gemm_s / self.gemm_s if self.gemm_s > 0 else 0.0,
                 TermName.ATTENTION_EFFICIENCY: non_gemm_s / non if non > 0 else 0.0,
                 TermName.OTHER_EFFICIENCY: non_gemm_s / non if non > 0 else 0.0}
        return [replace(t, seconds=t.seconds * scale.get(t.name, 1.0)) for t in self.terms]

    @property
    def fixed_s(self) -> float:
        """the terms that do not scale a part of the ceiling (quantization, compensation, dispatch)"""
        return sum(t.seconds for t in self.terms if t.name not in EFFICIENCY_TERMS)


def realistic_step(res: Resources, recipe: PrecisionRecipe, gemms: GemmList, step: StepEval, *, mode: str,
                   eff: Efficiency = UNFITTED, graph: bool = True) -> Realistic:
    """The realistic time of one evaluated step (scalar: no leading axis) of ``recipe``; ``graph``: the
    GEMMs sit in a compiled model (False: one linear compiled and called on its own)."""
    eff = eff.capped()
    gemm_s = float(step.gemm_time)
    attention_s = float(step.attention_time)
    other_s = float(step.non_gemm_time) - attention_s
    terms = quantization_terms(res, recipe, gemms, step, mode=mode, eff=eff, graph=graph)
    terms.append(dispatch_term(eff, float(np.sum(gemms.count))))
    eta_c = np.asarray(eff.gemm if graph else eff.kernel, dtype=float)
    real_gemm = gemm_seconds(step.gemm, eta_c, eff.memory, eff.shape)
    fitted = eff.fitted
    lo, hi = float(np.min(eta_c)), float(np.max(eta_c))
    span = f"{lo:.0%}" if hi - lo < 0.005 else f"{lo:.0%}-{hi:.0%}"
    memory = "" if eff.memory is None else f", memory-bound ones at {eff.memory:.0%} of their bandwidth"
    terms.append(Term(TermName.GEMM_EFFICIENCY, max(real_gemm - gemm_s, 0.0),
                      f"the GEMM kernels at {span} of their compute ceiling{memory} ({eff.source})"
                      if hi < 1 or eff.memory is not None else "kernels at their ceiling (not fitted)",
                      ("gemm" if graph else "kernel") in fitted))
    for name, t, eta, key, what in ((TermName.ATTENTION_EFFICIENCY, attention_s, eff.attention, "attention", "attention"),
                                    (TermName.OTHER_EFFICIENCY, other_s, eff.other, "other",
                                     "norms, activations, residual adds")):
        terms.append(Term(name, t * (1 / eta - 1), f"{what} at {eta:.0%} of their roofline ({mode}, {eff.source})"
                          if eta < 1 else f"{what} at their roofline (not fitted)", key in fitted))
    return Realistic(gemm_s, attention_s, other_s, terms, float(step.step_time))


def gemm_seconds(g: GemmEval, eta: np.ndarray, memory: float | None = None, shape: float | np.ndarray = 1.0
                 ) -> float:
    """The GEMMs' realistic time in one step:

    ``sum_i count_i max((t_compute,i - t_extra,i) / eta_i + t_extra,i / min(eta_i / shape_i, 1), t_memory,i / eta_m)``

    the multiply-accumulates at their efficiency ``eta_i`` (shape term included), the extra vector
    work (dequantization) at the efficiency without the shape term (it is per weight, not per row),
    the memory time at ``eta_m`` (``memory``; None: ``eta_i``)."""
    eta = np.asarray(eta, dtype=float)
    eta_x = np.minimum(eta / np.asarray(shape, dtype=float), 1.0)
    eta_m = eta if memory is None else memory
    t_c = (g.t_compute - g.t_extra) / eta + g.t_extra / eta_x
    return float((g.count * np.maximum(t_c, g.t_memory / eta_m)).sum())


def quantization_terms(res: Resources, recipe: PrecisionRecipe, gemms: GemmList, step: StepEval, *, mode: str,
                       eff: Efficiency, graph: bool) -> list[Term]:
    """The roofline-priced quantization terms of one step (all GEMMs with their counts)."""
    if recipe.compute_dtype != "int8":
        return []
    e_act = DTYPE_BYTES[{"fp32": "fp32", "amp-bf16": "bf16", "int8": "int8"}[mode]]
    m, k = gemms.m.astype(float), gemms.k.astype(float)
    c = np.asarray(gemms.count, dtype=float)
    x_el = m * k
    eta_q = eff.quantization if graph else eff.kernel_quantization
    dynamic = recipe.x_scale == "per-token"
    fused = (graph and not dynamic) or (mode == "int8" and not dynamic)
    q_bytes = c * x_el * (0.0 if fused else e_act + 1)
    q_ops = c * x_el * cost("quantize_ops_per_element")
    if dynamic:
        q_bytes = q_bytes + c * x_el * e_act
        q_ops = q_ops + c * x_el * cost("scale_search_ops_per_element")
    vector = float(res.vector_peak)
    level = level_of(x_el * e_act, step.l2_capacity, step.llc_capacity)
    bw = level_bandwidth(level, *res.bandwidths())
    quant = float(np.maximum(q_ops / vector, q_bytes / bw).sum()) / eta_q
    passes = ("a scale-search pass and a quantize pass over each GEMM input X (per token)" if dynamic else
              "the quantize fused into the kernel producing each GEMM input X (per tensor): its ops, no extra pass"
              if fused else "a quantize pass over the GEMM input X (per tensor)")
    terms = [Term(TermName.ACTIVATION_QUANTIZATION, quant,
                  passes + (f", over the fitted quantization efficiency {eta_q:.2f}" if eta_q != 1.0 else ""),
                  calibrated=("quantization" if graph else "kernel_quantization") in eff.fitted),
             Term(TermName.SMOOTHING, 0.0, "SmoothQuant's X / s, fused into the quantization pass")]
    if "amx_int8" not in res.platform.isa:
        comp = float((c * m * gemms.n.astype(float)).sum() * cost("compensation_ops_per_output") / vector)
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


def dispatch_term(eff: Efficiency, calls: float) -> Term:
    if "call_s" not in eff.fitted:
        return Term(TermName.DISPATCH, 0.0, "not fitted: run `roofline calibrate` on a validate report of this host")
    return Term(TermName.DISPATCH, dispatch_s(eff, calls),
                f"one graph call {eff.call_s * 1e6:.0f} us + {calls:g} GEMM launches x {eff.per_op_s * 1e6:.1f} us "
                f"({eff.source})", calibrated=True)


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
