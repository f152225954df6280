"""``roofline check``: measured speedups beside their ceilings, and the gap split into named terms.

Typed speedups (the paper's Table 14 layout): times in units of the baseline's time ``T_b``
(Amdahl). The ceiling takes ``f / s + (1 - f) / s_non``, the measurement ``1 / S_measured``; the
gap is attributed to the overhead terms of :mod:`roofline.estimate.overheads` (each
``seconds / T_b``), and what they leave is reported as unexplained. ``T_b`` is the baseline's
GEMM time at its ceiling (over its calibrated kernel efficiency) divided by ``f``. For the linear
block the ceiling is the GEMM speedup; the GEMM kernel's efficiency and compensation count there.

A validate report: the same rows from the report's own measurements (the realistic speedup is the
realistic baseline time over the realistic time, both modelled), and latencies in seconds
(encoder and each GEMM shape): measured, the plain ceiling and the realistic estimate (ceiling
plus every term), so the model's error is visible beside the ceiling's.
"""

from __future__ import annotations

import dataclasses

from roofline.errors import UserError
from roofline.estimate.amdahl_inputs import Overrides
from roofline.estimate.calibrate import realistic_encoder, realistic_shape
from roofline.estimate.engine import calibration_notes, estimate
from roofline.estimate.overheads import Term, named_terms
from roofline.estimate.workload import make_workload
from roofline.results.check import CheckResult, CheckRow, CheckTerm, Comparison, LatencyRow
from roofline.results.validate import ValidateResult
from roofline.spec.calibration import Calibration
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import get_recipe

LINEAR_BLOCK_TERMS = ("u8 shift and compensation", "GEMM kernel efficiency")
UNCALIBRATED = ("uncalibrated: kernel efficiency, non-GEMM efficiency and dispatch are not modelled; "
                "`roofline calibrate` fits them from a validate report of the platform")


def _positive(flag: str, v: float | None) -> None:
    if v is not None and not (v > 0 and v == v and v != float("inf")):
        raise UserError(f"{flag} {v}: a measured speedup is a positive number")


def _terms(terms: list[Term], t_base: float, gap_s: float) -> list[CheckTerm]:
    return [CheckTerm(t.name, t.seconds, t.seconds / t_base, t.seconds / gap_s if gap_s > 0 else None, t.how,
                      t.calibrated) for t in terms]


def check_typed(platform: Platform, model: ModelSpec, precision: str, baseline: str, *, throughput_speedup: float,
                linear_speedup: float | None = None, batch: int = 1, seq_len: int = 256,
                overrides: Overrides = Overrides(), calibration: Calibration | None = None,
                calibration_name: str | None = None, calibration_any_platform: bool = False) -> CheckResult:
    applied = calibration_notes(calibration, platform, calibration_name, calibration_any_platform)
    _positive("--throughput-speedup", throughput_speedup)
    _positive("--linear-speedup", linear_speedup)
    if precision == baseline:
        raise UserError(f"--precision {precision} is the baseline too: nothing to compare")
    est = estimate(platform, model, precisions=[precision], baseline=baseline, batch=batch, seq_len=seq_len,
                   overrides=overrides)
    sp = est.speedups[0]
    f, s, s_non, ceiling = sp.f_gemm, sp.gemm_speedup, sp.non_gemm_speedup, sp.end_to_end_ceiling
    recipe = get_recipe(precision)
    gemms, _ = make_workload(model, None, batch, seq_len, None).gemms()
    eta_b = calibration.gemm(baseline) if calibration else 1.0
    eta_p = calibration.gemm(precision) if calibration else 1.0
    t_base = est.precisions[baseline].gemm_time_s / eta_b / f
    terms = named_terms(platform, recipe, gemms, sockets=int(platform.sockets.value),
                        non_gemm_mode=recipe.non_gemm_mode, calibration=calibration)
    if calibration is not None:
        g = est.precisions[precision].gemm_time_s
        terms.append(Term("GEMM kernel efficiency", g / eta_p - g / eta_b,
                          f"{precision} kernels at {eta_p:.0%} of their ceiling, the baseline's at {eta_b:.0%} "
                          "(calibrated)", True))
    ceiling_time = f / s + (1 - f) / s_non
    total = sum(t.seconds for t in terms) / t_base
    gap = 1 / throughput_speedup - ceiling_time
    rows = [CheckRow("throughput", throughput_speedup, ceiling, throughput_speedup / ceiling,
                     1 / (ceiling_time + total), throughput_speedup * (ceiling_time + total))]
    if linear_speedup is not None:
        lin = sum(t.seconds for t in terms if t.name in LINEAR_BLOCK_TERMS) / t_base
        realistic_lin = f / (f / s + lin)
        rows.append(CheckRow("linear block", linear_speedup, s, linear_speedup / s, realistic_lin,
                             linear_speedup / realistic_lin))
    notes = applied + ([] if calibration else [UNCALIBRATED])
    if gap <= 0:
        notes.append("the measurement meets or beats the ceiling: the ceiling's inputs (f, s_non, peaks, bandwidth) "
                     "are conservative here, not a real breakthrough")
    comp = Comparison(precision=precision, baseline=baseline, f_gemm=f, f_gemm_source=sp.f_gemm_source,
                      gemm_speedup=s, non_gemm_speedup=s_non, baseline_time_s=t_base, rows=rows,
                      terms=_terms(terms, t_base, gap * t_base), explained_gap=min(total / gap, 1.0) if gap > 0 else 0.0,
                      unexplained=max(gap - total, 0.0))
    return CheckResult(model=model.name, cpu=platform.name, source="typed", calibration=calibration_name,
                       comparisons=[comp], notes=notes)


def check_report(report: ValidateResult, platform: Platform, spec: ModelSpec, *, calibration: Calibration | None,
                 source: str, calibration_name: str | None = None, precision: str | None = None,
                 baseline: str | None = None, calibration_any_platform: bool = False) -> CheckResult:
    """The INT8 comparisons of a validate report (all, or one precision and baseline), and its
    latencies against the ceiling and the realistic estimate."""
    applied = calibration_notes(calibration, platform, calibration_name, calibration_any_platform)
    bad = [s for s in report.shapes if not s.numerics_ok] + [e for e in report.encoder if not e.numerics_ok]
    if bad:
        what = ", ".join(sorted({f"{getattr(b, 'name', 'encoder')} {b.precision}" for b in bad}))
        raise UserError(f"{source}: the report has failed numerics ({what}); its timings are not results")
    runs = {e.precision: e for e in report.encoder}
    latency: list[LatencyRow] = []
    comparisons: list[Comparison] = []
    real: dict[str, object] = {}
    for name, run in runs.items():
        if not run.latency_s or (precision is not None and name not in (precision, baseline)):
            continue
        r = real[name] = realistic_encoder(platform, spec, name, report.layers, report.batch, report.seq_len,
                                           run.non_gemm_mode, calibration)
        latency.append(LatencyRow("encoder", name, run.latency_s, r.ceiling_s, r.realistic_s,
                                  r.ceiling_s / run.latency_s - 1, r.realistic_s / run.latency_s - 1))
    for s in report.shapes:
        if s.measured_ops_per_s:
            measured = 2.0 * s.m * s.n * s.k / s.measured_ops_per_s
            c, rs = realistic_shape(platform, s.precision, s.name, s.m, s.n, s.k, calibration)
            if precision is None or s.precision in (precision, baseline):
                latency.append(LatencyRow(s.name, s.precision, measured, c, rs, c / measured - 1, rs / measured - 1))
    for row in report.end_to_end:
        if not row.precision.startswith("int8") or row.realized_speedup is None or row.baseline not in real:
            continue
        if (precision and row.precision != precision) or (baseline and row.baseline != baseline):
            continue
        base, mine = runs[row.baseline], real[row.precision]
        t_base = base.latency_s
        gap_s = runs[row.precision].latency_s - mine.ceiling_s
        total = sum(t.seconds for t in mine.terms)
        realistic = real[row.baseline].realistic_s / mine.realistic_s  # the model's own speedup, both sides modelled
        eta = (calibration.gemm(row.precision) / calibration.gemm(row.baseline)) if calibration else 1.0
        rows = [CheckRow("throughput", row.realized_speedup, row.ceiling, row.fraction_of_ceiling, realistic,
                         row.realized_speedup / realistic)]
        if row.linear_block_speedup:
            s_real = row.predicted_gemm_speedup * eta
            rows.append(CheckRow("linear block", row.linear_block_speedup, row.predicted_gemm_speedup,
                                 row.linear_block_speedup / row.predicted_gemm_speedup, s_real,
                                 row.linear_block_speedup / s_real))
        comparisons.append(Comparison(
            precision=row.precision, baseline=row.baseline, f_gemm=row.f_gemm,
            f_gemm_source=f"measured: {source}", gemm_speedup=row.predicted_gemm_speedup,
            non_gemm_speedup=row.non_gemm_speedup, baseline_time_s=t_base, rows=rows,
            terms=_terms(mine.terms, t_base, gap_s), explained_gap=min(total / gap_s, 1.0) if gap_s > 0 else 0.0,
            unexplained=max(gap_s - total, 0.0) / t_base,
        ))
    notes = applied + ([] if calibration else [UNCALIBRATED])
    for c in comparisons:
        if c.explained_gap >= 1.0 and c.rows[0].fraction_of_realistic > 1:
            notes.append(f"{c.precision} vs {c.baseline}: the terms exceed the measured gap (shares above 100%): the "
                         f"realistic speedup is {100 * (1 - 1 / c.rows[0].fraction_of_realistic):.0f}% below the measured "
                         "one")
    notes.append(f"times in seconds are for the report's encoder: {report.layers} layers, batch {report.batch} x "
                 f"seq {report.seq_len}, {report.host.threads} threads; the non-GEMM work ran as the report says "
                 "(FP32 for INT8, without autocast)")
    return CheckResult(model=spec.name, cpu=platform.name, source=source, calibration=calibration_name,
                       comparisons=comparisons, latency=latency, notes=notes)


def report_model(report: ValidateResult, spec: ModelSpec) -> ModelSpec:
    """The model as the report built it (its layer count)."""
    return dataclasses.replace(spec, num_hidden_layers=report.layers, measured=())


