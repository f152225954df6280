"""Build, compile and check every precision variant of one float model, before any timing.

A variant is timed only after it passed every check:

- numerics: ``||y - ref|| / ||ref||`` against a float64 reference of the same float weights within
  the precision's tolerance (:data:`TOLERANCE`), and the compiled output within
  :data:`MISCOMPILE` of the same variant run eagerly (a wrong compile is caught even when both
  are "close to FP32");
- quantization took effect (INT8 variants): the generated code calls an INT8 GEMM kernel and no
  float GEMM, every linear weight was replaced, and the error is not FP32's;
- nothing failed: an error in one variant is recorded and leaves the others intact.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from roofline.validation.compiled import FLOAT_KERNELS, INT8_KERNELS, KernelReport, compile_module
from roofline.validation.variants import build_variant, quantized_weights

#: relative Frobenius error vs float64 a correct kernel of each kind stays under, for one linear
#: layer (with random weights and N(0, 1) inputs: FP32 ~1e-7, BF16 ~3e-3, INT8 ~1e-2; a
#: saturating INT8 kernel on a CPU without VNNI reaches 5-13%; group-128 INT4 of N(0, 1) weights
#: ~10%, its 16 levels spanning each group's outliers). Errors of independent layers add
#: in quadrature, so a model of L layers is held to ``sqrt(L)`` times these.
TOLERANCE = {"fp32": 1e-4, "bf16": 3e-2, "int8": 3e-2, "int4": 1.5e-1}
#: compiled vs the same variant run eagerly: a miscompile (seen: 140%) is far off both; two correct
#: implementations of the same quantized model differ by about their own error, so the allowed gap
#: is the larger of this floor and twice the variant's error vs float64
MISCOMPILE = 5e-3


def kind(precision: str) -> str:
    """fp32, bf16, int8 or int4: what the numerics tolerance and the quantization checks go by."""
    for k in ("int8", "int4", "bf16"):
        if precision.startswith(k):
            return k
    return precision


@dataclass
class Prepared:
    precision: str
    tolerance: float = 0.0
    call: Callable | None = None
    kernels: KernelReport = field(default_factory=KernelReport)
    rel_error: float | None = None
    eager_gap: float | None = None
    quantized: bool | None = None
    compile_s: float | None = None
    input_mutated: bool = False
    flags: list[str] = field(default_factory=list)

    @property
    def numerics_ok(self) -> bool:
        return self.rel_error is not None and self.rel_error <= self.tolerance and not any(
            f.startswith("miscompile") for f in self.flags)

    @property
    def usable(self) -> bool:
        """Timed only when correct, really quantized (INT8), and built without error."""
        return self.call is not None and self.numerics_ok and self.quantized is not False


def rel_error(y, ref) -> float:
    y, ref = y.detach().double(), ref.detach().double()
    return float((y - ref).norm() / ref.norm())


def prepare_variants(model, example, calibration: list, reference, precisions: list[str], *,
                     layers: int = 1, max_autotune: bool = False, progress: Callable[[str], None] = lambda s: None,
                     verbose: bool = False) -> dict[str, Prepared]:
    """Build, compile and check each precision; ``layers``: the depth the tolerances scale with."""

    out: dict[str, Prepared] = {}
    for precision in precisions:
        progress(precision)
        p = Prepared(precision, tolerance=TOLERANCE[kind(precision)] * layers**0.5)
        out[precision] = p
        try:
            m = build_variant(precision, model, calibration, example)
            with torch.no_grad():
                eager = m(example.clone())
            call, y, kernels, seconds = compile_module(m, example, max_autotune=max_autotune)
            p.kernels, p.compile_s = kernels, seconds
            x = example.clone()
            y = call(x)
            p.input_mutated = not torch.equal(x, example)
            if p.input_mutated:
                p.flags.append("note: writes into its input (fused residual add); inputs are cloned per call")
            p.rel_error = rel_error(y, reference)
            p.eager_gap = rel_error(y, eager)
            if p.eager_gap > max(MISCOMPILE, 2 * p.rel_error):
                p.flags.append(f"miscompile: compiled output differs from eager by {p.eager_gap:.1e} "
                               f"(its error vs float64 is {p.rel_error:.1e})")
            if p.rel_error > p.tolerance:
                p.flags.append(f"numerics: error {p.rel_error:.1e} above the {kind(precision)} tolerance "
                               f"{p.tolerance:.2g}")
            if precision.endswith("weight-only"):
                p.quantized = _check_weight_only(p, m)
            elif kind(precision) == "int8":
                p.quantized = _check_quantized(p, m)
            elif kernels.calls and not set(kernels.calls) <= FLOAT_KERNELS:
                p.flags.append(f"unexpected GEMM kernels for {precision}: {kernels.describe()}")
            p.call = call
        except Exception as e:  # one variant failing must not take the others down
            p.flags.append(f"error: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:300]}")
            if verbose:
                traceback.print_exc()
    return out


def _check_quantized(p: Prepared, module) -> bool:
    calls = set(p.kernels.calls)
    ok = True
    if not calls & INT8_KERNELS:
        p.flags.append(f"not quantized: the compiled code calls no INT8 GEMM ({p.kernels.describe()})")
        ok = False
    elif calls & FLOAT_KERNELS:
        p.flags.append(f"partly quantized: float GEMMs left in the compiled code ({p.kernels.describe()})")
        ok = False
    q, total = quantized_weights(module)
    if total and q < total:
        p.flags.append(f"not quantized: {total - q} of {total} linear weights are still float")
        ok = False
    if p.rel_error is not None and p.rel_error < 1e-5:
        p.flags.append(f"not quantized: error {p.rel_error:.1e} is FP32's")
        ok = False
    if p.kernels.activation_dtype == "int8":
        p.flags.append("note: signed INT8 activations into oneDNN (the s8 kernel, slower than u8 without VNNI)")
    return ok


def _check_weight_only(p: Prepared, module) -> bool:
    """Weight-only paths: every linear weight is a quantized tensor and the code calls a packed kernel
    (not a float GEMM on weights dequantized at compile time, which is what happens to an FP32 model)."""
    from roofline.validation.compiled import WEIGHT_ONLY_KERNELS

    ok = True
    q, total = quantized_weights(module)
    if total and q < total:
        p.flags.append(f"not quantized: {total - q} of {total} linear weights are still float")
        ok = False
    if not set(p.kernels.calls) & WEIGHT_ONLY_KERNELS:
        p.flags.append(f"not quantized: no weight-only kernel in the compiled code ({p.kernels.describe()})")
        ok = False
    return ok
