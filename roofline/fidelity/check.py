"""``roofline check``: measured speedups beside their ceilings and the realistic estimate, and the gap
split into the named terms of the realistic model (:mod:`roofline.model.realistic`).

Typed speedups (the paper's Table 14 layout) come through the estimate itself
(:func:`~roofline.model.estimate.evaluate`), so ``check`` and ``estimate`` give the same realistic
speedup for the same inputs. Times are in units of the baseline's realistic time ``T_b'`` (the
Amdahl frame: its GEMM ceiling over ``f``, each part scaled by its realistic factor). The gap between
the ceiling and the measurement, ``1/S_measured - 1/S``, is explained by

``1/S' - 1/S = (sum terms(new) - sum terms(baseline) / S) / T_b'``:

each of the precision's terms counts ``seconds / T_b'``; the baseline's own terms, which make the
baseline slower and the speedup larger, count ``-seconds / (S T_b')``. What they leave is unexplained.

A validate report: the same rows from the report's own measurements (the realistic speedup is the
realistic baseline time over the realistic time, both modelled for the report's encoder), and
latencies in seconds (encoder and each GEMM shape): measured, the plain ceiling and the realistic
estimate, so the model's error is visible beside the ceiling's.
"""

from __future__ import annotations

import dataclasses

from roofline.errors import UserError
from roofline.model.amdahl import Overrides
from roofline.model.build import CeilingSpec
from roofline.model.efficiency import NO_EFFICIENCIES, EfficiencySource
from roofline.model.estimate import EstimateQuery, evaluate
from roofline.model.harness import encoder_run, shape_run
from roofline.model.realistic import LINEAR_BLOCK_TERMS, UNFITTED, Realistic, Term, linear_block_speedup
from roofline.model.suspect import Suspect, gemm_bound, step_bound, suspect_input
from roofline.model.workload import WorkloadSpec
from roofline.results.check import CheckResult, CheckRow, CheckTerm, Comparison, LatencyRow
from roofline.results.validate import ValidateResult
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.vocab import Ceiling, MemoryModel

UNCALIBRATED = ("uncalibrated: kernel efficiency, non-GEMM efficiency and dispatch are not modelled; "
                "`roofline calibrate` fits them from a validate report of the platform")
BASELINE_TERMS = "the baseline's own terms"


def _positive(flag: str, v: float | None) -> None:
    if v is not None and not (v > 0 and v == v and v != float("inf")):
        raise UserError(f"{flag} {v}: a measured speedup is a positive number")


def _terms(terms: list[Term], unit_s: float, gap_s: float) -> list[CheckTerm]:
    return [CheckTerm(t.name.value if hasattr(t.name, "value") else str(t.name), t.seconds, t.seconds / unit_s,
                      t.seconds / gap_s if gap_s > 0 else None, t.how, t.calibrated) for t in terms]


def _speedup_row(metric: str, measured: float, ceiling: float, realistic: float, suspect: Suspect,
                 absolute: bool | None = None) -> CheckRow:
    """A speedup beside its ceiling. ``absolute``: whether the precision's own run beat its ceiling (None:
    not known, a typed speedup). A speedup above the ratio of two ceilings while neither run beats its own
    is no error in the model (the baseline ran further below its ceiling): a violation needs one."""
    violation = measured > ceiling and absolute is not False
    return CheckRow(metric, measured, ceiling, measured / ceiling, realistic, measured / realistic,
                    ceiling_violation=violation, suspect=suspect.input.value if violation else None)


def _latency_row(what: str, precision: str, measured_s: float, r: Realistic, platform: Platform, h,
                 bound, bound_s: float) -> LatencyRow:
    """A measured time beside the attainable ceiling, the bound and the realistic estimate: a violation is a
    run faster than the bound."""
    violation = measured_s < bound_s * (1 - 1e-12)
    suspect = suspect_input(platform, h.res.path(h.recipe.compute_dtype).name, bound) if violation else None
    return LatencyRow(what, precision, measured_s, r.ceiling_s, r.realistic_s, r.ceiling_s / measured_s - 1,
                      r.realistic_s / measured_s - 1, ceiling_violation=violation,
                      suspect=suspect.input.value if suspect else None, suspect_detail=suspect.text if suspect else "",
                      bound_s=bound_s, of_attainable=r.ceiling_s / measured_s, of_bound=bound_s / measured_s)


def violation_notes(comparisons: list[Comparison], latency: list[LatencyRow], *, typed: bool = False,
                    f_source: str = "", s_non_source: str = "") -> list[str]:
    """One note per row that beats its ceiling: an error in the model, and the input to suspect."""
    out = []
    for row in latency:
        if row.ceiling_violation:
            out.append(f"ceiling violation: {row.what} {row.precision} ran in {row.measured_s * 1e3:.3g} ms, faster "
                       f"than its {(row.bound_s or row.ceiling_s) * 1e3:.3g} ms bound: an error in the model; suspect "
                       f"{row.suspect_detail}")
    for c in comparisons:
        for row in c.rows:
            if not row.ceiling_violation:
                continue
            also = (f"; or f_GEMM ({f_source}) or s_non ({s_non_source}); or the {c.baseline} baseline ran further "
                    f"below its own ceiling than {c.precision}" if typed else
                    f" ({c.precision}'s own run beats its ceiling too)")
            out.append(f"ceiling violation: {c.precision} vs {c.baseline} {row.metric} speedup {row.measured:.2f}x is "
                       f"above its {row.ceiling:.2f}x ceiling: an error in the model, not a real breakthrough; "
                       f"suspect {c.suspect_detail}{also}")
    return out


def check_typed(platform: Platform, model: ModelSpec, precision: str, baseline: str, *, throughput_speedup: float,
                linear_speedup: float | None = None, batch: int = 1, seq_len: int = 256,
                overrides: Overrides = Overrides(), source: EfficiencySource = NO_EFFICIENCIES,
                memory_model: MemoryModel = MemoryModel.LEVELS) -> CheckResult:
    applied = source.notes(platform)
    _positive("--throughput-speedup", throughput_speedup)
    _positive("--linear-speedup", linear_speedup)
    if precision == baseline:
        raise UserError(f"--precision {precision} is the baseline too: nothing to compare")
    ev = evaluate(platform, model, EstimateQuery(
        precisions=[precision], baseline=baseline, workload=WorkloadSpec(batch=batch, seq_len=seq_len),
        ceiling=CeilingSpec(memory_model=memory_model), source=source, overrides=overrides))
    base, new = ev.realistic
    a = ev.amdahl[0]
    f, s, s_non, ceiling = a.f.value, a.s.value, a.s_non.value, a.ceiling
    realistic = a.realistic(base, new)
    g = base.gemm_s
    non_b = g * (1 - f) / f
    t_base = g * base.gemm_factor + non_b * base.non_gemm_factor + base.fixed_s  # T_b'
    terms = new.in_frame(g / s, non_b / s_non)
    base_s = sum(t.seconds for t in base.in_frame(g, non_b))
    if base_s > 0:
        terms.append(Term(BASELINE_TERMS, -base_s / ceiling,  # type: ignore[arg-type]
                          f"the {baseline} baseline's own terms ({base_s / t_base:.1%} of its time) make it slower, "
                          "so the speedup larger", True))
    ceiling_time = 1 / ceiling
    total = 1 / realistic - ceiling_time
    gap = 1 / throughput_speedup - ceiling_time
    step = ev.evaluated[1]
    suspect = suspect_input(platform, ev.res.path(step.recipe.compute_dtype).name, gemm_bound(step.step))
    rows = [_speedup_row("throughput", throughput_speedup, ceiling, realistic, suspect)]
    if linear_speedup is not None:
        lin = linear_block_speedup(s, base, new)
        rows.append(_speedup_row("linear block", linear_speedup, s, lin, suspect))
    notes = applied + ([] if source.calibration or source.stack else [UNCALIBRATED])  # a profile: its name and error
    if gap <= 0 and not rows[0].ceiling_violation:
        notes.append("the measurement meets the ceiling: the ceiling's inputs (f, s_non, peaks, bandwidth) "
                     "are conservative here, not a real breakthrough")
    comp = Comparison(precision=precision, baseline=baseline, f_gemm=f, f_gemm_source=a.f.source,
                      gemm_speedup=s, non_gemm_speedup=s_non, baseline_time_s=t_base, rows=rows,
                      terms=_terms(terms, t_base, gap * t_base), explained_gap=min(total / gap, 1.0) if gap > 0 else 0.0,
                      unexplained=max(gap - total, 0.0),
                      suspect_detail=suspect.text if any(r.ceiling_violation for r in rows) else "",
                      error_band=source.error_band(ev.res, step.recipe, one_row=ev.work.tokens <= 1))
    notes += violation_notes([comp], [], typed=True, f_source=a.f.source, s_non_source=a.s_non.source)
    return CheckResult(model=model.name, cpu=platform.name, source="typed",
                       calibration=source.calibration_name if source.calibration is not None else None,
                       comparisons=[comp], notes=notes, memory_model=MemoryModel(memory_model).value,
                       stack=source.stack_name, realistic_accuracy=source.accuracy)


def check_report(report: ValidateResult, platform: Platform, spec: ModelSpec, *, source: str,
                 efficiencies: EfficiencySource = NO_EFFICIENCIES, precision: str | None = None,
                 baseline: str | None = None) -> CheckResult:
    """The INT8 comparisons of a validate report (all, or one precision and baseline), and its
    latencies against the ceiling and the realistic estimate (``efficiencies``: a calibration's; a stack
    profile is not applied to a report, whose host the calibration describes)."""
    calibration, calibration_name = efficiencies.calibration, efficiencies.calibration_name
    applied = efficiencies.notes(platform)
    efficiencies = EfficiencySource(calibration=calibration)  # the report's host: its values, named by that host
    bad = [s for s in report.shapes if not s.numerics_ok] + [e for e in report.encoder if not e.numerics_ok]
    if bad:
        what = ", ".join(sorted({f"{getattr(b, 'name', 'encoder')} {b.precision}" for b in bad}))
        raise UserError(f"{source}: the report has failed numerics ({what}); its timings are not results")
    runs = {e.precision: e for e in report.encoder}
    notes_above: list[str] = []
    latency: list[LatencyRow] = []
    comparisons: list[Comparison] = []
    real: dict[str, Realistic] = {}
    for name, run in runs.items():
        if not run.latency_s or (precision is not None and name not in (precision, baseline)):
            continue
        h = encoder_run(platform, spec, name, report.layers, report.batch, report.seq_len, run.non_gemm_mode)
        r = real[name] = h.realistic(h.efficiency(efficiencies))
        hb = encoder_run(platform, spec, name, report.layers, report.batch, report.seq_len, run.non_gemm_mode,
                         ceiling=Ceiling.BOUND)
        latency.append(_latency_row("encoder", name, run.latency_s, r, platform, h, step_bound(h.step),
                                    hb.realistic(UNFITTED).ceiling_s))
    for s in report.shapes:
        if s.measured_ops_per_s and (precision is None or s.precision in (precision, baseline)):
            measured = 2.0 * s.m * s.n * s.k / s.measured_ops_per_s
            h = shape_run(platform, s.precision, s.name, s.m, s.n, s.k)
            r = h.realistic(h.efficiency(efficiencies))
            hb = shape_run(platform, s.precision, s.name, s.m, s.n, s.k, ceiling=Ceiling.BOUND)
            latency.append(_latency_row(s.name, s.precision, measured, r, platform, h, step_bound(h.step),
                                        hb.realistic(UNFITTED).ceiling_s))
    for row in report.end_to_end:
        if not row.precision.startswith("int8") or row.realized_speedup is None or row.baseline not in real:
            continue
        if (precision and row.precision != precision) or (baseline and row.baseline != baseline):
            continue
        mine, theirs = real[row.precision], real[row.baseline]
        t_base = runs[row.baseline].latency_s
        gap_s = runs[row.precision].latency_s - mine.ceiling_s
        total = mine.realistic_s - mine.ceiling_s
        realistic = theirs.realistic_s / mine.realistic_s  # the model's own speedup, both sides modelled
        h = encoder_run(platform, spec, row.precision, report.layers, report.batch, report.seq_len,
                        runs[row.precision].non_gemm_mode)
        suspect = suspect_input(platform, h.res.path(h.recipe.compute_dtype).name, gemm_bound(h.step))
        beaten = next((x.ceiling_violation for x in latency if x.what == "encoder" and x.precision == row.precision),
                      False)  # the precision's own run beat its bound
        rows = [_speedup_row("throughput", row.realized_speedup, row.ceiling, realistic, suspect, beaten)]
        if row.linear_block_speedup:
            s_real = linear_block_speedup(row.predicted_gemm_speedup, theirs, mine)
            rows.append(_speedup_row("linear block", row.linear_block_speedup, row.predicted_gemm_speedup, s_real,
                                     suspect, beaten))
        if not beaten and row.realized_speedup > row.ceiling:
            notes_above.append(
                f"{row.precision} vs {row.baseline}: {row.realized_speedup:.2f}x is above the {row.ceiling:.2f}x "
                f"ceiling while neither run beats its own ({row.baseline} at "
                f"{theirs.ceiling_s / runs[row.baseline].latency_s:.0%} of its ceiling, {row.precision} at "
                f"{mine.ceiling_s / runs[row.precision].latency_s:.0%}): no peak or bandwidth is contradicted; the "
                "speedup ceiling also rests on the measured f_GEMM and s_non (the profiler's split of each run)")
        comparisons.append(Comparison(
            precision=row.precision, baseline=row.baseline, f_gemm=row.f_gemm,
            f_gemm_source=f"measured: {source}", gemm_speedup=row.predicted_gemm_speedup,
            non_gemm_speedup=row.non_gemm_speedup, baseline_time_s=t_base, rows=rows,
            terms=_terms(mine.terms, t_base, gap_s), explained_gap=min(total / gap_s, 1.0) if gap_s > 0 else 0.0,
            unexplained=max(gap_s - total, 0.0) / t_base,
            suspect_detail=suspect.text if any(r.ceiling_violation for r in rows) else "",
        ))
    notes = applied + ([] if calibration else [UNCALIBRATED])
    for c in comparisons:
        if c.explained_gap >= 1.0 and c.rows[0].fraction_of_realistic > 1:
            notes.append(f"{c.precision} vs {c.baseline}: the terms exceed the measured gap (shares above 100%): the "
                         f"realistic speedup is {100 * (1 - 1 / c.rows[0].fraction_of_realistic):.0f}% below the measured "
                         "one")
    notes += violation_notes(comparisons, latency) + notes_above
    notes.append(f"times in seconds are for the report's encoder: {report.layers} layers, batch {report.batch} x "
                 f"seq {report.seq_len}, {report.host.threads} threads; the non-GEMM work ran as the report says "
                 "(FP32 for INT8, without autocast)")
    return CheckResult(model=spec.name, cpu=platform.name, source=source,
                       calibration=calibration_name if calibration is not None else None,
                       comparisons=comparisons, latency=latency, notes=notes)


def report_model(report: ValidateResult, spec: ModelSpec) -> ModelSpec:
    """The model as the report built it (its layer count)."""
    return dataclasses.replace(spec, num_hidden_layers=report.layers, measured=())


__all__ = ["LINEAR_BLOCK_TERMS", "check_report", "check_typed", "report_model"]
