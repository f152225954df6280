"""Rich rendering of ``roofline accuracy``."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from roofline.report.fmt import sig
from roofline.report.style import document, section, table
from roofline.results.accuracy import AccuracyResult


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.0f}%"


def _value(kind: str, v: float) -> str:
    if kind in ("latency", "gemm"):
        return f"{sig(v * 1e3)} ms"
    if kind == "throughput":
        return f"{sig(v)}/s"
    if kind == "tokens_per_s":
        return f"{sig(v)} tok/s"
    if kind == "gemm_share":
        return f"{v:.3f}"
    return f"{v:.2f}x"


def summary_lines(r: AccuracyResult) -> list[str]:
    out = [f"{r.records} records, {r.figures} figures: {r.violations} ceiling violation"
           f"{'' if r.violations == 1 else 's'} (measured above the ceiling)"]
    bare = [s.stack for s in r.stacks if s.accuracy is None]
    for s in r.stacks:
        if s.accuracy is None:
            continue
        a = s.accuracy
        per = ", ".join(f"{p} {100 * e:.0f}%" for p, e in s.per_platform.items())
        out += [f"{s.stack}: realistic |error| median {100 * a.median_abs_error:.0f}% leave-one-platform-out (worst "
                f"{100 * a.worst_abs_error:.0f}%)",
                f"  {a.figures} figures: {per}; in sample {100 * s.in_sample_median_abs_error:.0f}%"]
    if bare:
        out.append(f"{', '.join(bare)}: no stack profile, checked against the ceiling only")
    return out


def render_accuracy(r: AccuracyResult, brief: bool = False) -> RenderableType:
    sections: list[RenderableType] = []
    for record in dict.fromkeys(row.record for row in r.rows):
        rows = [x for x in r.rows if x.record == record]
        t = table(["what", "precision", "measured", "ceiling", "error", "realistic", "error "],
                  left=("what", "precision"), wrap=("what", "precision"))
        for row in rows:
            prec = row.precision + (f" vs {row.baseline}" if row.baseline else "")
            what = row.what if row.kind in ("gemm", "tokens_per_s") else row.kind.replace("_", " ")
            t.add_row(what, prec, _value(row.kind, row.measured), _value(row.kind, row.ceiling),
                      Text(_pct(row.ceiling_error), style="bold red" if row.violation else ""),
                      "-" if row.realistic is None else _value(row.kind, row.realistic), _pct(row.realistic_error))
        sections.append(section(f"{record} ({rows[0].platform}, stack {rows[0].stack})", t))
    sections.append(section("Notes", None, ["error: predicted / measured - 1", *r.notes]))
    return document([Text(line) for line in summary_lines(r)], sections, brief=brief)
