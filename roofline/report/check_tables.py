"""Rich rendering of `check` (the paper's Table 14 with the gap attributed) and of a calibration."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from roofline.report.fmt import ms
from roofline.results.check import CheckResult
from roofline.spec.calibration import Calibration


def _table(title: str, cols: list[str], left: tuple[str, ...]) -> Table:
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for c in cols:
        t.add_column(c, justify="left" if c in left else "right", no_wrap=c not in ("how",))
    return t


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def render_check(r: CheckResult) -> RenderableType:
    parts: list[RenderableType] = [Text.assemble(
        (f"check {r.model} on {r.cpu}", "bold"), f": {r.source}",
        f"; calibration {r.calibration}" if r.calibration else "; uncalibrated")]
    t = _table("Measured against the ceilings (the paper's Table 14) and the realistic estimate",
               ["precision", "vs", "metric", "measured", "ceiling", "of ceiling", "realistic", "of realistic"],
               left=("precision", "vs", "metric"))
    for c in r.comparisons:
        for row in c.rows:
            t.add_row(c.precision, c.baseline, row.metric, f"{row.measured:.2f}x", f"{row.ceiling:.2f}x",
                      _pct(row.fraction_of_ceiling), f"{row.realistic:.2f}x", _pct(row.fraction_of_realistic))
    parts.append(t)
    for c in r.comparisons:
        a = _table(f"{c.precision} vs {c.baseline}: where the gap goes (f_GEMM {c.f_gemm:.3g}, s_GEMM "
                   f"{c.gemm_speedup:.3g}, s_non {c.non_gemm_speedup:.3g}; baseline {ms(c.baseline_time_s)} ms)",
                   ["term", "ms", "of baseline", "of the gap", "how"], left=("term", "how"))
        for term in c.terms:
            a.add_row(term.name, ms(term.seconds), _pct(term.share_of_baseline), _pct(term.share_of_gap), term.how)
        a.add_row(Text("unexplained", style="bold"), ms(c.unexplained * c.baseline_time_s), _pct(c.unexplained),
                  _pct(1 - c.explained_gap) if c.explained_gap or c.unexplained else "-", "what the terms leave")
        parts.append(a)
    if r.latency:
        lt = _table("Time per call: measured, the plain ceiling, and the realistic estimate (ceiling + terms)",
                    ["what", "precision", "measured ms", "ceiling ms", "error", "realistic ms", "error "],
                    left=("what", "precision"))
        for row in r.latency:
            lt.add_row(row.what, row.precision, ms(row.measured_s), ms(row.ceiling_s), f"{100 * row.ceiling_error:+.0f}%",
                       ms(row.realistic_s), f"{100 * row.realistic_error:+.0f}%")
        parts.append(lt)
    if r.notes:
        parts.append(Text("\n".join(r.notes)))
    return Group(*parts)


def render_calibration(c: Calibration) -> RenderableType:
    t = _table(f"Calibration of {c.platform}", ["what", "value", "how"], left=("what", "how"))
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
    t.caption = "fitted from" + (first.source or "").split("; fitted from")[-1]
    t.caption_justify = "left"
    return t
