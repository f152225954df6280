"""Rich rendering of ``roofline accuracy``."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from roofline.report.fmt import sig
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
    out = [f"{r.records} records, {r.figures} figures; ceiling violations (a measured performance above its "
           f"ceiling): {r.violations}"]
    for s in r.stacks:
        if s.accuracy is None:
            out.append(f"stack {s.stack}: no profile, checked against the ceiling only")
            continue
        a = s.accuracy
        per = ", ".join(f"{p} {100 * e:.0f}%" for p, e in s.per_platform.items())
        out.append(f"stack {s.stack}: realistic |error| leave-one-platform-out median {100 * a.median_abs_error:.0f}%, "
                   f"worst {100 * a.worst_abs_error:.0f}% over {a.figures} figures on {a.platforms} platforms "
                   f"(per platform: {per}); fitted on all of them, median {100 * s.in_sample_median_abs_error:.0f}%")
    return out


def render_accuracy(r: AccuracyResult, brief: bool = False) -> RenderableType:
    head = Text("\n".join(summary_lines(r)))
    if brief:
        return head
    parts: list[RenderableType] = [head]
    for record in dict.fromkeys(row.record for row in r.rows):
        rows = [x for x in r.rows if x.record == record]
        t = Table(title=f"{record} ({rows[0].platform}, stack {rows[0].stack})", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
        for c in ("what", "precision", "measured", "ceiling", "error", "realistic", "error "):
            t.add_column(c, justify="left" if c in ("what", "precision") else "right", no_wrap=True)
        for row in rows:
            prec = row.precision + (f" vs {row.baseline}" if row.baseline else "")
            what = row.what if row.kind in ("gemm", "tokens_per_s") else row.kind.replace("_", " ")
            t.add_row(what, prec, _value(row.kind, row.measured), _value(row.kind, row.ceiling),
                      Text(_pct(row.ceiling_error), style="bold red" if row.violation else ""),
                      "-" if row.realistic is None else _value(row.kind, row.realistic), _pct(row.realistic_error))
        parts.append(t)
    parts.append(Text("error: predicted / measured - 1. " + " ".join(r.notes)))
    return Group(*parts)
