"""Fitting a :class:`Calibration` from one or more `validate` reports of a platform. It only fits: the
realistic time it is fitted against is the one realistic model (:mod:`roofline.model.realistic`),
applied to the workloads validate measures (:mod:`roofline.model.harness`).

From each report's encoder runs: the GEMM efficiency inside the model per precision (the encoder's
GEMM time at its ceiling over its measured linear-block time), the non-GEMM efficiency per part
and mode (modelled ceiling time of attention and of the norms, activations and residual adds over
their measured time), and the quantization kernels' efficiency (the modelled dynamic quantization
time over the non-GEMM time the dynamic INT8 encoder spends beyond the FP32 one). Profiler times are
scaled to the timed latency. From the per-shape kernels (one GEMM compiled and called on its own):
its kernel and quantization efficiencies, by least squares over the shapes. From the dispatch
measurement: the per-call and per-GEMM costs. Several reports pool: the geometric mean of their values.
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass, field

import numpy as np

from roofline.calc.aggregate import geometric_mean
from roofline.errors import UserError
from roofline.model.harness import encoder_run, shape_run
from roofline.model.realistic import UNFITTED, Efficiency, TermName, dispatch_s
from roofline.results.validate import ValidateResult
from roofline.spec.calibration import MAX_EFFICIENCY, MIN_EFFICIENCY, Calibration, MeasuredHost
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import variant_recipe
from roofline.spec.sourced import Sourced


@dataclass
class Samples:
    """Every value the reports give, by what it calibrates (a typed accumulator)."""

    gemm: dict[str, list[float]] = field(default_factory=dict)
    """precision -> encoder GEMM efficiencies"""
    non_gemm: dict[str, list[float]] = field(default_factory=dict)
    """'<part>-<mode>' -> non-GEMM efficiencies"""
    quantization: list[float] = field(default_factory=list)
    call_s: list[float] = field(default_factory=list)
    per_op_s: list[float] = field(default_factory=list)

    def add_efficiency(self, values: list[float], value: float) -> None:
        if MIN_EFFICIENCY <= value <= MAX_EFFICIENCY:  # else the ceiling's inputs or the timing are off
            values.append(value)

    def merge(self, other: "Samples") -> None:
        for name in ("gemm", "non_gemm"):
            for k, v in getattr(other, name).items():
                getattr(self, name).setdefault(k, []).extend(v)
        for name in ("quantization", "call_s", "per_op_s"):
            getattr(self, name).extend(getattr(other, name))


def report_samples(report: ValidateResult, platform: Platform, spec: ModelSpec) -> Samples:
    """Every calibration value one report gives."""
    out = Samples()
    scaled: dict[str, dict] = {}
    for run in report.encoder:
        if not run.latency_s or run.linear_block_s is None or not run.numerics_ok:
            continue
        scale = run.latency_s / (run.linear_block_s + run.attention_s + run.other_s)  # profiler -> wall time
        h = encoder_run(platform, spec, run.precision, report.layers, report.batch, report.seq_len, run.non_gemm_mode)
        parts = {"linear": run.linear_block_s * scale, "attention": run.attention_s * scale,
                 "other": run.other_s * scale, "mode": run.non_gemm_mode, "harness": h}
        scaled[run.precision] = parts
        out.add_efficiency(out.gemm.setdefault(run.precision, []), float(h.step.gemm_time) / parts["linear"])
        if run.precision in ("fp32", "bf16"):
            attention = float(h.step.attention_time)
            modelled = {"attention": attention, "other": float(h.step.non_gemm_time) - attention}
            for part in ("attention", "other"):
                out.add_efficiency(out.non_gemm.setdefault(f"{part}-{run.non_gemm_mode}", []),
                                   modelled[part] / parts[part])
    fp32 = scaled.get("fp32")
    for precision, parts in scaled.items():
        recipe = variant_recipe(precision)
        if fp32 is None or recipe.x_scale != "per-token" or parts["mode"] != fp32["mode"]:
            continue
        modelled = parts["harness"].realistic(UNFITTED).seconds(TermName.ACTIVATION_QUANTIZATION)
        extra = parts["other"] - fp32["other"]
        if extra > 0 and modelled > 0:
            out.add_efficiency(out.quantization, modelled / extra)
    d = report.dispatch or {}
    if "call_s" in d:
        out.call_s.append(d["call_s"])
    if "per_op_s" in d:
        out.per_op_s.append(d["per_op_s"])
    return out


@dataclass(frozen=True)
class KernelFit:
    """One precision's least-squares fit over isolated-linear shapes."""

    kernel: float
    quantization: float | None
    shapes: int


def kernel_fit(reports: list[ValidateResult], platform: Platform, dispatch: Efficiency) -> dict[str, KernelFit]:
    """Per precision, from the shapes of every report (one linear compiled and called on its own), the
    least-squares fit, in relative error, of

        t_measured - t_dispatch - t_other = t_ceiling / eta_kernel + t_quant / eta_quant

    with ``t_quant`` the unfitted activation quantization term (none for FP32 and BF16: no
    ``eta_quant``) and ``t_other`` the remaining terms (u8 compensation). A negative quantization
    coefficient is dropped and the kernel refitted alone."""
    rows: dict[str, list[tuple[float, float, float]]] = {}
    t_dispatch = dispatch_s(dispatch, 1)
    for r in reports:
        for s in r.shapes:
            if not s.measured_ops_per_s or not s.numerics_ok:
                continue
            real = shape_run(platform, s.precision, s.name, s.m, s.n, s.k).realistic(UNFITTED)
            quant = real.seconds(TermName.ACTIVATION_QUANTIZATION)
            other = real.realistic_s - real.ceiling_s - quant
            measured = 2.0 * s.m * s.n * s.k / s.measured_ops_per_s
            rows.setdefault(s.precision, []).append((real.ceiling_s, quant, measured - t_dispatch - other))
    out = {}
    for precision, v in rows.items():
        a = np.array(v)
        x = a[:, :2] / a[:, 2:]  # relative error: each shape counts alike
        cols = [0, 1] if a[:, 1].any() else [0]
        coef = np.linalg.lstsq(x[:, cols], np.ones(len(a)), rcond=None)[0]
        if len(cols) == 2 and coef[1] <= 0:
            cols, coef = [0], np.linalg.lstsq(x[:, [0]], np.ones(len(a)), rcond=None)[0]
        if not 1 / MAX_EFFICIENCY <= coef[0] <= 1 / MIN_EFFICIENCY:
            continue  # kernels far above their ceiling (or a thousand times below): nothing to calibrate
        eta_q = (1 / coef[1] if len(cols) == 2 and 1 / MAX_EFFICIENCY <= coef[1] <= 1 / MIN_EFFICIENCY
                 else None)
        out[precision] = KernelFit(1 / coef[0], eta_q, len(a))
    return out


def fit_calibration(reports: list[tuple[ValidateResult, ModelSpec, str]], platform: Platform) -> Calibration:
    """Pool the values of every report (model spec and path beside each) over ``platform``, the
    measured host the reports ran on."""
    samples = Samples()
    for report, spec, _ in reports:
        samples.merge(report_samples(report, platform, spec))
    when = "; ".join(f"{path} ({r.model}, {r.date}, {r.host.threads} threads)" for r, _, path in reports)

    def fitted(values: list[float], how: str, mean=geometric_mean) -> Sourced:
        over = f" (geometric mean of {len(values)})" if len(values) > 1 and mean is geometric_mean else ""
        return Sourced(value=float(f"{mean(values):.4g}"), kind="derived", source=f"{how}{over}; fitted from {when}")

    gemm = {p: fitted(v, "the encoder's GEMM time at the roofline ceiling over its measured linear-block time")
            for p, v in samples.gemm.items() if v}
    if not gemm:
        raise UserError(f"{reports[0][2]}: no timed encoder runs with a profiler breakdown to fit from "
                        "(a report from roofline validate without --skip-end-to-end)")
    r0 = reports[0][0]
    partial = Calibration(
        platform=r0.platform.name, host=MeasuredHost.of(platform, r0.host.cpu_model), gemm_efficiency=gemm,
        non_gemm_efficiency={k: fitted(v, f"modelled {k.split('-')[0]} roofline over the encoder's measured "
                                          f"{k.split('-')[0]} time") for k, v in samples.non_gemm.items() if v},
        quantization_efficiency=fitted(samples.quantization, "the modelled dynamic quantization time over the "
                                       "non-GEMM time the dynamic INT8 encoder spends beyond the FP32 one")
        if samples.quantization else None,
        call_s=fitted(samples.call_s, "a compiled graph's call, measured", statistics.median) if samples.call_s else None,
        per_op_s=fitted(samples.per_op_s, "an extern op in a compiled graph, measured", statistics.median)
        if samples.per_op_s else None,
        notes=tuple(dict.fromkeys(f"host: {r.host.cpu_model} ({r.host.microarchitecture}), torch {r.host.torch}, "
                                  f"torchao {r.host.torchao}" for r, _, _ in reports)),
    )
    dispatch = Efficiency(call_s=partial.call_s.value if partial.call_s else 0.0,
                          per_op_s=partial.per_op_s.value if partial.per_op_s else 0.0,
                          fitted=frozenset({"call_s"}) if partial.call_s else frozenset())
    fits = kernel_fit([r for r, _, _ in reports], platform, dispatch)

    def how(n: int, quantized: bool) -> str:
        return (f"least-squares fit over {n} shapes of their measured time (less dispatch and compensation) as the "
                "ceiling over the kernel efficiency" + (" plus the roofline activation quantization over the "
                                                        "quantization efficiency" if quantized else "")
                + f"; one linear compiled and called on its own; fitted from {when}")

    kernel = {p: Sourced(value=float(f"{f.kernel:.4g}"), kind="derived", source=how(f.shapes, f.quantization is not None))
              for p, f in fits.items()}
    kernel_q = {p: Sourced(value=float(f"{f.quantization:.4g}"), kind="derived", source=how(f.shapes, True))
                for p, f in fits.items() if f.quantization is not None}
    return dataclasses.replace(partial, kernel_efficiency=kernel, kernel_quantization_efficiency=kernel_q)
