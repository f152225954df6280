"""Fitting a :class:`Calibration` from a `validate` report, and the realistic estimate it gives.

From the report's per-shape kernels: the GEMM kernel efficiency per precision (ceiling time over
the profiler's kernel self time, geometric mean over shapes) and the quantization kernels'
efficiency (the named quantization term over the extra non-GEMM time an INT8 shape costs beyond
FP32). From its encoder runs: the non-GEMM efficiency per mode (modelled roofline time of the
attention, norms, activations and residual adds over their measured time, profiler times scaled
to the measured latency). From its dispatch measurement: the per-call and per-GEMM costs.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from roofline.calc.non_gemm import op_roofline, transformer_non_gemm
from roofline.calc.shapes import GemmList, gemm_list
from roofline.errors import UserError
from roofline.estimate.overheads import efficiency_terms, named_terms
from roofline.estimate.paths import non_gemm_peaks
from roofline.estimate.workload import make_workload
from roofline.results.validate import RECIPE_OF, ValidateResult
from roofline.spec.calibration import Calibration
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import get_recipe
from roofline.spec.sourced import Sourced
from roofline.units import DTYPE_BYTES


def _geo(values: list[float]) -> float:
    return float(math.exp(np.mean(np.log(values))))


def harness_non_gemm_s(platform: Platform, spec: ModelSpec, layers: int, batch: int, seq_len: int,
                       mode: str) -> dict[str, float]:
    """Modelled roofline time of the validate encoder's non-GEMM work, attention and the rest
    (no embeddings: the encoder takes hidden states)."""
    ops = transformer_non_gemm(batch=batch, seq_len=seq_len, hidden=spec.hidden_size,
                               intermediate=spec.intermediate_size, layers=layers, heads=spec.num_attention_heads,
                               kv_heads=spec.kv_heads, head_dim=spec.head_size, gated_mlp=spec.gated_mlp)
    keep = np.array([n != "embeddings" for n in ops.names])
    sockets = int(platform.sockets.value)
    act, matmul_peak, vector_peak = non_gemm_peaks(platform, mode, sockets)
    t = np.maximum(*op_roofline(ops, matmul_peak, vector_peak, DTYPE_BYTES[act], DTYPE_BYTES[act],
                                platform.dram_bytes_per_s(sockets)))
    return {"attention": float(t[ops.matmul].sum()), "other": float(t[keep & ~ops.matmul].sum())}


def _single(name: str, m: int, n: int, k: int) -> GemmList:
    return gemm_list([(name, m, n, k, 1)])


def fit_calibration(report: ValidateResult, platform: Platform, spec: ModelSpec, report_path: str) -> Calibration:
    when = f"fitted from {report_path} ({report.model}, {report.date}, {report.host.threads} threads)"
    sockets = int(platform.sockets.value)

    def fitted(value: float, how: str) -> Sourced:
        return Sourced(value=float(f"{value:.4g}"), kind="derived", source=f"{how}; {when}")

    gemm: dict[str, Sourced] = {}
    quant: list[float] = []
    fp32_other = {s.name: s.other_s for s in report.shapes if s.precision == "fp32" and s.other_s}
    for precision in dict.fromkeys(s.precision for s in report.shapes):
        rows = [s for s in report.shapes if s.precision == precision and s.kernel_s and s.measured_ops_per_s]
        if not rows:
            continue
        ratios = [2.0 * s.m * s.n * s.k / s.predicted_ops_per_s / s.kernel_s for s in rows]
        gemm[precision] = fitted(_geo(ratios), f"geometric mean over {len(rows)} shapes of the ceiling time over "
                                               "the GEMM kernel's profiler self time")
        recipe = get_recipe(RECIPE_OF.get(precision, precision))
        if recipe.compute_dtype == "int8":
            for s in rows:
                extra = (s.other_s or 0) - fp32_other.get(s.name, 0)
                modelled = named_terms(platform, recipe, _single(s.name, s.m, s.n, s.k), sockets=sockets,
                                       non_gemm_mode="fp32")[0].seconds
                if extra > 0 and modelled > 0:
                    quant.append(modelled / extra)
    non_gemm: dict[str, Sourced] = {}
    for run in report.encoder:
        if run.precision not in ("fp32", "bf16") or not run.latency_s or run.linear_block_s is None:
            continue
        scale = run.latency_s / (run.linear_block_s + run.attention_s + run.other_s)  # profiler -> wall time
        modelled = harness_non_gemm_s(platform, spec, report.layers, report.batch, report.seq_len, run.non_gemm_mode)
        for part, measured in (("attention", run.attention_s), ("other", run.other_s)):
            non_gemm[f"{part}-{run.non_gemm_mode}"] = fitted(
                modelled[part] / (measured * scale),
                f"modelled {part} roofline over the {run.precision} encoder's measured {part} time")
    if not gemm:
        raise UserError(f"{report_path}: no timed per-shape kernels with profiler kernel times to fit from "
                        "(a report from roofline 0.1 validate, without --skip-shapes)")
    d = report.dispatch or {}
    return Calibration(
        platform=report.platform.name, gemm_efficiency=gemm, non_gemm_efficiency=non_gemm,
        quantization_efficiency=fitted(_geo(quant), f"geometric mean over {len(quant)} INT8 shapes of the modelled "
                                                    "quantization time over the extra non-GEMM time beyond FP32")
        if quant else None,
        call_s=fitted(d["call_s"], "a compiled graph's call, measured") if "call_s" in d else None,
        per_op_s=fitted(d["per_op_s"], "an extern op in a compiled graph, measured") if "per_op_s" in d else None,
        notes=(f"host: {report.host.cpu_model} ({report.host.microarchitecture}), torch {report.host.torch}, "
               f"torchao {report.host.torchao}",),
    )


@dataclass(frozen=True)
class Realistic:
    precision: str
    ceiling_s: float
    realistic_s: float
    terms: list


def realistic_encoder(platform: Platform, spec: ModelSpec, precision: str, layers: int, batch: int, seq_len: int,
                      non_gemm_mode: str, calibration: Calibration | None) -> Realistic:
    """Ceiling and realistic time of the validate encoder (fused QKV, no embeddings) in ``precision``."""
    recipe = get_recipe(RECIPE_OF.get(precision, precision))
    sockets = int(platform.sockets.value)
    gemms, _ = make_workload(dataclasses.replace(spec, num_hidden_layers=layers, measured=()), "forward", batch,
                             seq_len, None).gemms()
    from roofline.estimate.grid import evaluate_grid

    ev = evaluate_grid(platform, [recipe], gemms, np.zeros(len(gemms), dtype=bool), sockets=sockets, bandwidth="measured")
    gemm_s = float(ev.gemm_time[0])
    non = harness_non_gemm_s(platform, spec, layers, batch, seq_len, non_gemm_mode)
    non_s = sum(non.values())
    terms = named_terms(platform, recipe, gemms, sockets=sockets, non_gemm_mode=non_gemm_mode, calibration=calibration)
    terms += efficiency_terms(calibration, precision, gemm_s, non_gemm_mode, non)
    return Realistic(precision, gemm_s + non_s, gemm_s + non_s + sum(t.seconds for t in terms), terms)


def realistic_shape(platform: Platform, precision: str, name: str, m: int, n: int, k: int,
                    calibration: Calibration | None) -> tuple[float, float]:
    """(ceiling, realistic) seconds of one compiled linear called on its own, as `validate` times it."""
    from roofline.estimate.shape import shape_ceiling

    recipe = get_recipe(RECIPE_OF.get(precision, precision))
    ceiling = 2.0 * m * n * k / shape_ceiling(platform, recipe.name, m, n, k).attainable_ops_per_s
    terms = named_terms(platform, recipe, _single(name, m, n, k), sockets=int(platform.sockets.value),
                        non_gemm_mode="fp32", calibration=calibration)
    eta = calibration.gemm(precision) if calibration else 1.0
    return ceiling, ceiling / eta + sum(t.seconds for t in terms)
