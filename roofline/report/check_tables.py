"""Rich rendering of `check` (the paper's Table 14 with the gap attributed) and of a calibration."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from roofline.report.fmt import ms, realistic_basis
from roofline.report.style import document, grid, section, table
from roofline.results.check import CheckResult
from roofline.spec.calibration import Calibration


def _table(title: str, cols: list[str], left: tuple[str, ...], notes=(), wrap: tuple[str, ...] = ("how",)
           ) -> tuple[Table, Group]:
    t = table(cols, left=left, wrap=wrap)
    return t, section(title, t, notes)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def headline(r: CheckResult) -> list[RenderableType]:
    """The source, then one row per comparison: the measured end-to-end speedup against the ceiling and the
    realistic estimate, then what the realistic estimate rests on."""
    g = grid(["speedup", "measured", "ceiling", "of ceiling", "realistic", "of realistic"], left=("speedup",))
    violations: list[RenderableType] = []
    for c in r.comparisons:
        row = c.rows[0]
        g.add_row(f"{c.precision} vs {c.baseline}", Text(f"{row.measured:.2f}x", style="bold"), f"{row.ceiling:.2f}x",
                  _pct(row.fraction_of_ceiling) + (" !" if row.ceiling_violation else ""), f"{row.realistic:.2f}x",
                  _pct(row.fraction_of_realistic))
        if row.ceiling_violation:
            other = (f", or the {c.baseline} baseline ran further below its own" if r.source == "typed" else "")
            violations.append(Text(f"! {c.precision} vs {c.baseline} beats its ceiling: suspect {c.suspect_detail}{other}",
                                   style="bold red"))
    for lat in r.latency:
        if lat.ceiling_violation:
            violations.append(Text(f"! {lat.what} {lat.precision} ran faster than its ceiling "
                                   f"({ms(lat.measured_s)} < {ms(lat.ceiling_s)} ms): an error in the model; suspect "
                                   f"{lat.suspect_detail}", style="bold red"))
    return [Text(f"check {r.model} on {r.cpu}: {r.source}", style="bold"), g, *violations,
            Text(f"realistic: {realistic_basis(r.calibration, r.stack, r.realistic_accuracy)}")]


def render_check(r: CheckResult, brief: bool = False) -> RenderableType:
    sections: list[RenderableType] = []
    t, sec = _table("Measured against the ceilings (the paper's Table 14) and the realistic estimate",
                    ["speedup", "metric", "measured", "ceiling", "%", "realistic", "% "], left=("speedup", "metric"),
                    notes=["%: the measured speedup as a share of the ceiling, and of the realistic estimate" + (
                        "; !: above the ceiling (an error in the model: the notes name the input to suspect)"
                        if any(row.ceiling_violation for c in r.comparisons for row in c.rows) else "")])
    for c in r.comparisons:
        for row in c.rows:
            t.add_row(f"{c.precision} vs {c.baseline}", row.metric, f"{row.measured:.2f}x", f"{row.ceiling:.2f}x",
                      _pct(row.fraction_of_ceiling) + (" !" if row.ceiling_violation else ""), f"{row.realistic:.2f}x",
                      _pct(row.fraction_of_realistic))
    sections.append(sec)
    for c in r.comparisons:
        a, sec = _table(f"{c.precision} vs {c.baseline}: where the gap goes (f_GEMM {c.f_gemm:.3g}, s_GEMM "
                        f"{c.gemm_speedup:.3g}, s_non {c.non_gemm_speedup:.3g}; baseline {ms(c.baseline_time_s)} ms)",
                        ["term", "ms", "of baseline", "of the gap", "how"], left=("term", "how"))
        for term in c.terms:
            a.add_row(term.name, ms(term.seconds), _pct(term.share_of_baseline), _pct(term.share_of_gap), term.how)
        a.add_row(Text("unexplained", style="bold"), ms(c.unexplained * c.baseline_time_s), _pct(c.unexplained),
                  _pct(1 - c.explained_gap) if c.explained_gap or c.unexplained else "-", "what the terms leave")
        sections.append(sec)
    if r.latency:
        lt, sec = _table("Time per call: measured against the attainable ceiling and the bound, and the realistic "
                         "estimate (ceiling + terms)",
                         ["what", "precision", "measured", "attainable", "share", "of bound", "realistic",
                          "error"], left=("what", "precision"), wrap=("what", "precision"),
                         notes=["ms; share, of bound: the share of the attainable ceiling and of the bound the run reached"
                                + ("; !: faster than the bound (the notes name the input to suspect)"
                                   if any(row.ceiling_violation for row in r.latency) else "")])
        for row in r.latency:
            lt.add_row(row.what, row.precision, ms(row.measured_s), ms(row.ceiling_s), _pct(row.of_attainable),
                       _pct(row.of_bound) + (" !" if row.ceiling_violation else ""),
                       ms(row.realistic_s), f"{100 * row.realistic_error:+.0f}%")
        sections.append(sec)
    if r.notes:
        sections.append(section("Notes", None, r.notes))
    return document(headline(r), sections, brief=brief)


def render_calibration(c: Calibration) -> RenderableType:
    t = table(["what", "value", "how"], left=("what", "how"), wrap=("how",))
    how = lambda v: (v.source or "").split("; fitted from")[0]  # noqa: E731
    for k, v in c.gemm_efficiency.items():
        t.add_row(f"GEMM efficiency in the model, {k}", f"{v.value:.3g}", how(v))
    for k, v in c.kernel_efficiency.items():
        t.add_row(f"GEMM kernel efficiency alone, {k}", f"{v.value:.3g}", how(v))
    for k, v in c.kernel_quantization_efficiency.items():
        t.add_row(f"quantization efficiency alone, {k}", f"{v.value:.3g}", how(v))
    for k, v in c.non_gemm_efficiency.items():
        t.add_row(f"non-GEMM efficiency, {k}", f"{v.value:.3g}", how(v))
    for name, label, scale, unit in (("quantization_efficiency", "quantization efficiency in the model", 1, ""),
                                     ("call_s", "graph call", 1e6, " us"), ("per_op_s", "per extern op", 1e6, " us")):
        v = getattr(c, name)
        if v is not None:
            t.add_row(label, f"{v.value * scale:.3g}{unit}", how(v))
    first = next(iter(c.gemm_efficiency.values()))
    return section(f"Calibration of {c.platform}", t, ["fitted from" + (first.source or "").split("; fitted from")[-1]])
