"""Fitting a :class:`Calibration` from one or more `validate` reports of a platform, and the
realistic estimate it gives.

From each report's encoder runs: the GEMM efficiency inside the model per precision (the encoder's
GEMM time at its roofline ceiling over its measured linear-block time), the non-GEMM efficiency per
mode (modelled roofline time of attention and of the norms, activations and residual adds over
their measured time), and the quantization kernels' efficiency (the modelled dynamic quantization
time over the non-GEMM time the dynamic INT8 encoder spends beyond the FP32 one). Profiler times are
scaled to the timed latency. From the per-shape kernels (one GEMM compiled and called on its own):
its kernel and quantization efficiencies, by least squares over the shapes. From the dispatch
measurement: the per-call and per-GEMM costs. Several reports pool: the geometric mean of their values.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass

import numpy as np

from roofline.calc.non_gemm import op_roofline, transformer_non_gemm
from roofline.calc.shapes import GemmList, gemm_list
from roofline.errors import UserError
from roofline.estimate.overheads import dispatch_s, efficiency_terms, named_terms
from roofline.estimate.paths import non_gemm_peaks
from roofline.estimate.workload import make_workload
from roofline.results.validate import RECIPE_OF, ValidateResult
from roofline.spec.calibration import MAX_EFFICIENCY, Calibration
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


def _encoder_gemm_s(platform: Platform, spec: ModelSpec, precision: str, layers: int, batch: int,
                    seq_len: int) -> tuple[float, GemmList]:
    """The validate encoder's GEMM time at the roofline ceiling (fused QKV), and its GEMMs."""
    from roofline.estimate.grid import evaluate_grid

    recipe = get_recipe(RECIPE_OF.get(precision, precision))
    gemms, _ = make_workload(dataclasses.replace(spec, num_hidden_layers=layers, measured=()), "forward", batch,
                             seq_len, None).gemms()
    ev = evaluate_grid(platform, [recipe], gemms, np.zeros(len(gemms), dtype=bool),
                       sockets=int(platform.sockets.value), bandwidth="measured")
    return float(ev.gemm_time[0]), gemms


def _report_values(report: ValidateResult, platform: Platform, spec: ModelSpec) -> dict[str, list[float]]:
    """Every calibration value one report gives, keyed ``group/key``."""
    sockets = int(platform.sockets.value)
    out: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        if key in ("call_s", "per_op_s") or 0 < value <= MAX_EFFICIENCY:  # else the ceiling's inputs are off
            out.setdefault(key, []).append(value)

    scaled: dict[str, dict[str, float]] = {}
    gemms = None  # the encoder's GEMM list, the same in every precision
    for run in report.encoder:
        if not run.latency_s or run.linear_block_s is None or not run.numerics_ok:
            continue
        scale = run.latency_s / (run.linear_block_s + run.attention_s + run.other_s)  # profiler -> wall time
        scaled[run.precision] = {"linear": run.linear_block_s * scale, "attention": run.attention_s * scale,
                                 "other": run.other_s * scale, "mode": run.non_gemm_mode}
        gemm_s, gemms = _encoder_gemm_s(platform, spec, run.precision, report.layers, report.batch, report.seq_len)
        add(f"gemm/{run.precision}", gemm_s / scaled[run.precision]["linear"])
        if run.precision in ("fp32", "bf16"):
            modelled = harness_non_gemm_s(platform, spec, report.layers, report.batch, report.seq_len, run.non_gemm_mode)
            for part in ("attention", "other"):
                add(f"non_gemm/{part}-{run.non_gemm_mode}", modelled[part] / scaled[run.precision][part])
    fp32 = scaled.get("fp32")
    for precision, parts in scaled.items():
        recipe = get_recipe(RECIPE_OF.get(precision, precision))
        if fp32 is None or gemms is None or recipe.x_scale != "per-token" or parts["mode"] != fp32["mode"]:
            continue
        modelled = named_terms(platform, recipe, gemms, sockets=sockets, non_gemm_mode=parts["mode"])[0].seconds
        extra = parts["other"] - fp32["other"]
        if extra > 0 and modelled > 0:
            add("quantization", modelled / extra)
    d = report.dispatch or {}
    for key in ("call_s", "per_op_s"):
        if key in d:
            add(key, d[key])
    return out


def _kernel_fit(reports: list[ValidateResult], platform: Platform,
                partial: Calibration) -> dict[str, tuple[float, float | None, int]]:
    """Per precision, from the shapes of every report (one linear compiled and called on its own):
    ``(eta_kernel, eta_quant, n)`` from the least-squares fit, in relative error, of

        t_measured - t_dispatch = t_ceiling / eta_kernel + t_quant / eta_quant

    with ``t_quant`` the uncalibrated activation quantization term (none for FP32 and BF16:
    ``eta_quant`` is None); the other terms (u8 compensation) are subtracted from the measured time
    as they are. A negative quantization coefficient is dropped and the kernel's refitted alone."""
    rows: dict[str, list[tuple[float, float, float]]] = {}
    dispatch = dispatch_s(partial, 1)
    for r in reports:
        for s in r.shapes:
            if not s.measured_ops_per_s or not s.numerics_ok:
                continue
            ceiling, with_terms = realistic_shape(platform, s.precision, s.name, s.m, s.n, s.k, None)
            quant = _quant_alone_s(platform, s.precision, s.name, s.m, s.n, s.k)
            rows.setdefault(s.precision, []).append(
                (ceiling, quant, 2.0 * s.m * s.n * s.k / s.measured_ops_per_s - dispatch - (with_terms - ceiling - quant)))
    out = {}
    for precision, v in rows.items():
        a = np.array(v)
        x = a[:, :2] / a[:, 2:]  # relative error: each shape counts alike
        cols = [0, 1] if a[:, 1].any() else [0]
        coef = np.linalg.lstsq(x[:, cols], np.ones(len(a)), rcond=None)[0]
        if len(cols) == 2 and coef[1] <= 0:
            cols, coef = [0], np.linalg.lstsq(x[:, [0]], np.ones(len(a)), rcond=None)[0]
        if not 1 / MAX_EFFICIENCY <= coef[0]:
            continue  # kernels far above their ceiling: the ceiling's inputs are wrong, nothing to calibrate
        out[precision] = (1 / coef[0], 1 / coef[1] if len(cols) == 2 and coef[1] >= 1 / MAX_EFFICIENCY else None,
                          len(a))
    return out


def _quant_alone_s(platform: Platform, precision: str, name: str, m: int, n: int, k: int) -> float:
    """The uncalibrated activation quantization term of one linear called on its own."""
    recipe = get_recipe(RECIPE_OF.get(precision, precision))
    terms = named_terms(platform, recipe, _single(name, m, n, k), sockets=int(platform.sockets.value),
                        non_gemm_mode="fp32", graph=False)
    return next((t.seconds for t in terms if t.name == "activation quantization"), 0.0)


def fit_calibration(reports: list[tuple[ValidateResult, ModelSpec, str]], platform: Platform) -> Calibration:
    """Pool the values of every report (model spec and path beside each) over ``platform``, the
    measured host the reports ran on."""
    values: dict[str, list[float]] = {}
    for report, spec, _ in reports:
        for k, v in _report_values(report, platform, spec).items():
            values.setdefault(k, []).extend(v)
    when = "; ".join(f"{path} ({r.model}, {r.date}, {r.host.threads} threads)" for r, _, path in reports)

    def fitted(key: str, how: str, mean=_geo) -> Sourced:
        v = values[key]
        over = f" (geometric mean of {len(v)})" if len(v) > 1 and mean is _geo else ""
        return Sourced(value=float(f"{mean(v):.4g}"), kind="derived", source=f"{how}{over}; fitted from {when}")

    def group(prefix: str, how: str) -> dict[str, Sourced]:
        return {k.split("/", 1)[1]: fitted(k, how) for k in values if k.startswith(prefix + "/")}

    gemm = group("gemm", "the encoder's GEMM time at the roofline ceiling over its measured linear-block time")
    if not gemm:
        raise UserError(f"{reports[0][2]}: no timed encoder runs with a profiler breakdown to fit from "
                        "(a report from roofline validate without --skip-end-to-end)")
    r0 = reports[0][0]
    partial = Calibration(
        platform=r0.platform.name, gemm_efficiency=gemm,
        non_gemm_efficiency={k: fitted(f"non_gemm/{k}", f"modelled {k.split('-')[0]} roofline over the encoder's "
                                                        f"measured {k.split('-')[0]} time")
                             for k in (x.split("/", 1)[1] for x in values if x.startswith("non_gemm/"))},
        quantization_efficiency=fitted("quantization", "the modelled dynamic quantization time over the non-GEMM "
                                                       "time the dynamic INT8 encoder spends beyond the FP32 one")
        if "quantization" in values else None,
        call_s=fitted("call_s", "a compiled graph's call, measured", statistics.median) if "call_s" in values else None,
        per_op_s=fitted("per_op_s", "an extern op in a compiled graph, measured", statistics.median)
        if "per_op_s" in values else None,
        notes=tuple(dict.fromkeys(f"host: {r.host.cpu_model} ({r.host.microarchitecture}), torch {r.host.torch}, "
                                  f"torchao {r.host.torchao}" for r, _, _ in reports)),
    )
    fit = _kernel_fit([r for r, _, _ in reports], platform, partial)
    def how(n: int, quantized: bool) -> str:
        return (f"least-squares fit over {n} shapes of their measured time (less dispatch and compensation) as the "
                "ceiling over the kernel efficiency" + (" plus the roofline activation quantization over the "
                                                        "quantization efficiency" if quantized else "")
                + f"; one linear compiled and called on its own; fitted from {when}")

    kernel = {p: Sourced(value=float(f"{e:.4g}"), kind="derived", source=how(n, q is not None))
              for p, (e, q, n) in fit.items()}
    kernel_q = {p: Sourced(value=float(f"{q:.4g}"), kind="derived", source=how(n, True))
                for p, (_, q, n) in fit.items() if q is not None}
    return dataclasses.replace(partial, kernel_efficiency=kernel, kernel_quantization_efficiency=kernel_q)


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
    gemm_s, gemms = _encoder_gemm_s(platform, spec, precision, layers, batch, seq_len)
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
                        non_gemm_mode="fp32", calibration=calibration, graph=False)
    eta = calibration.kernel(precision) if calibration else 1.0
    return ceiling, ceiling / eta + sum(t.seconds for t in terms)
