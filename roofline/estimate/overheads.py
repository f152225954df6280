"""The overheads between the roofline ceiling and a real quantized model, each a named term
priced by the same roofline as the GEMMs (its own bytes and ops):

- activation quantization: dynamic quantization reads X for the per-token scale search and again
  to write it in INT8, two passes. Static quantization has its scale fixed, so in a compiled model
  Inductor fuses the quantize into the kernel that produces X (layer norm, the GeLU epilogue): its
  ops, no extra pass. A single linear called on its own (``graph=False``) has no producer to fuse
  into: a pass reading X and writing it in INT8;
- smoothing: SmoothQuant's per-channel ``X / s`` is fused into the quantization pass by Inductor
  (0 s, listed so that nobody counts it twice);
- u8 shift and compensation: on parts whose INT8 path is VNNI (u8 x s8), activations are shifted
  by 128 in the quantization pass and every output corrected, ``M N`` vector ops per GEMM;
- unfused post-ops: dynamic INT8 leaves the FFN activation (GeLU) outside the GEMM epilogue
  (static INT8 fuses it; the paper). Either way nothing beyond the ceiling: the ceiling's non-GEMM
  work already counts the activation as its own pass, as the FP32 baseline runs it (listed so
  nobody counts it twice); output dequantization is in the qlinear epilogue for both;
- dispatch: per graph call and per GEMM launch, measured by `validate` (0 until calibrated).

With a calibration (:mod:`roofline.spec.calibration`), two efficiency terms are added: the GEMM
kernels' and the non-GEMM work's measured time beyond their roofline. The realistic estimate is
the ceiling plus all terms.

Small activations are priced at the LLC bandwidth when they fit the LLC (they come from the
previous kernel and are still cached), else at DRAM bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from roofline.calc.shapes import GemmList
from roofline.estimate.paths import choose_path
from roofline.spec.calibration import Calibration
from roofline.spec.platform import Platform
from roofline.spec.precision import PrecisionRecipe
from roofline.units import DTYPE_BYTES

#: vector ops per element: scale search (abs, max), quantize (multiply, round, clamp, convert)
SCALE_SEARCH_OPS = 2.0
QUANTIZE_OPS = 4.0


@dataclass(frozen=True)
class Term:
    name: str
    seconds: float
    how: str
    calibrated: bool = False


def _pass_time(platform: Platform, sockets: int, nbytes: np.ndarray, ops: np.ndarray, tensor_bytes: np.ndarray) -> float:
    """Roofline time of element-wise passes: ``max(ops / P_vector, bytes / B)`` with B the LLC's
    bandwidth for tensors that fit the LLC, else DRAM's."""
    p_vec = choose_path(platform, "fp32", sockets).peak
    b_mem = platform.dram_bytes_per_s(sockets)
    b_llc = platform.llc_bytes_per_s(sockets)
    fits = tensor_bytes <= platform.llc_domain_bytes
    bw = np.where(fits, b_llc if b_llc is not None else b_mem, b_mem)
    return float(np.maximum(ops / p_vec, nbytes / bw).sum())


def named_terms(platform: Platform, recipe: PrecisionRecipe, gemms: GemmList, *, sockets: int, non_gemm_mode: str,
                calibration: Calibration | None = None, graph: bool = True) -> list[Term]:
    """The roofline-priced overhead terms of one step (all GEMMs with their counts); ``graph``: the
    GEMMs sit in a compiled model (static quantization fused into X's producer), not called alone."""
    if recipe.compute_dtype != "int8":
        return _dispatch(gemms, calibration)
    e_act = DTYPE_BYTES["fp32" if non_gemm_mode == "fp32" else "bf16"]
    m, n, k, c = (a.astype(float) for a in (gemms.m, gemms.n, gemms.k, gemms.count))
    x_el = m * k
    eta_q = calibration.quantization(recipe.name, graph) if calibration else 1.0
    dynamic = recipe.x_scale == "per-token"
    fused = graph and not dynamic
    q_bytes = c * x_el * (0.0 if fused else e_act + 1)
    q_ops = c * x_el * QUANTIZE_OPS
    if dynamic:
        q_bytes = q_bytes + c * x_el * e_act
        q_ops = q_ops + c * x_el * SCALE_SEARCH_OPS
    quant = _pass_time(platform, sockets, q_bytes, q_ops, x_el * e_act) / eta_q
    passes = ("a scale-search pass and a quantize pass over each GEMM input X (per token)" if dynamic else
              "the quantize fused into the kernel producing each GEMM input X (per tensor): its ops, no extra pass"
              if fused else "a quantize pass over the GEMM input X (per tensor)")
    terms = [Term("activation quantization", quant,
                  passes + (f", over the calibrated quantization efficiency {eta_q:.2f}" if eta_q != 1.0 else ""),
                  calibrated=eta_q != 1.0),
             Term("smoothing", 0.0, "SmoothQuant's X / s, fused into the quantization pass")]
    if "amx_int8" not in platform.isa:
        comp = float((c * m * n).sum() / choose_path(platform, "fp32", sockets).peak)
        terms.append(Term("u8 shift and compensation", comp,
                          "no AMX: VNNI/AVX2 multiply u8 x s8, so X is shifted by 128 in the quantize pass and each "
                          "output corrected (M N ops per GEMM)"))
    else:
        terms.append(Term("u8 shift and compensation", 0.0, "AMX multiplies s8 x s8: none needed"))
    if dynamic:
        terms.append(Term("unfused post-ops", 0.0, "dynamic INT8: GeLU runs as its own pass over the FFN-up output, "
                                                   "as in the baseline: the ceiling's non-GEMM work already counts it"))
    else:
        terms.append(Term("unfused post-ops", 0.0, "static INT8: GeLU and the residual add fused into the GEMM epilogue"))
    return terms + _dispatch(gemms, calibration)


def dispatch_s(calibration: Calibration | None, calls: float) -> float:
    """One compiled graph call holding ``calls`` GEMM launches; 0 when not calibrated."""
    if calibration is None or calibration.call_s is None:
        return 0.0
    return calibration.call_s.value + calls * (calibration.per_op_s.value if calibration.per_op_s else 0.0)


def _dispatch(gemms: GemmList, calibration: Calibration | None) -> list[Term]:
    if calibration is None or calibration.call_s is None:
        return [Term("dispatch", 0.0, "not calibrated: run `roofline calibrate` on a validate report of this host")]
    calls = float(gemms.count.sum())
    per_op = calibration.per_op_s.value if calibration.per_op_s else 0.0
    return [Term("dispatch", dispatch_s(calibration, calls),
                 f"one graph call {calibration.call_s.value * 1e6:.0f} us + {calls:g} GEMM launches x "
                 f"{per_op * 1e6:.1f} us", calibrated=True)]


def efficiency_terms(calibration: Calibration | None, precision: str, gemm_ceiling_s: float, non_gemm_mode: str,
                     non_gemm_ceiling_s: dict[str, float]) -> list[Term]:
    """Calibrated kernel and non-GEMM efficiency, as seconds beyond the ceiling; ``non_gemm_ceiling_s`` by
    part (attention, other)."""
    if calibration is None:
        return []
    eta_g = calibration.gemm(precision)
    terms = [Term("GEMM kernel efficiency", gemm_ceiling_s * (1 / eta_g - 1),
                  f"the GEMM kernels reach {eta_g:.0%} of the roofline ceiling (calibrated)", calibrated=True)]
    for part, t in non_gemm_ceiling_s.items():
        eta = calibration.non_gemm(f"{part}-{non_gemm_mode}")
        label = "attention efficiency" if part == "attention" else "other non-GEMM efficiency"
        terms.append(Term(label, t * (1 / eta - 1),
                          f"{'attention reaches' if part == 'attention' else 'norms, activations, residual adds reach'} "
                          f"{eta:.0%} of their roofline ({non_gemm_mode}, calibrated)", calibrated=True))
    return terms
