"""Charts as hand-built SVG for the HTML report (no matplotlib: the page works without the ``plot`` extra):
the roofline of an estimate, a plan's latency against load, accuracy's predicted against measured, and a
check's measured share of the ceiling. Each function takes a result and returns one ``<svg>`` element; each
drawn point carries a ``<title>`` (its value on hover) and a ``data-point`` attribute naming it.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from html import escape

from roofline.report.fmt import sig
from roofline.results.accuracy import AccuracyResult
from roofline.results.check import CheckResult
from roofline.results.estimate import EstimateResult
from roofline.results.plan import PlanResult

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")
DTYPE_COLORS = {"fp32": "#1f77b4", "bf16": "#2ca02c", "int8": "#d62728", "fp16": "#9467bd"}
WIDTH, HEIGHT = 760, 440
LEFT, RIGHT, TOP, BOTTOM = 78, 190, 34, 52


def colors_for(names: Sequence[str]) -> dict[str, str]:
    """A colour per name, each its own: the palette's, then hues a golden angle apart (two lightnesses) for as many
    more as there are names."""
    out = {}
    for i, n in enumerate(names):
        j = i - len(PALETTE)
        out[n] = PALETTE[i] if j < 0 else f"hsl({(j * 137.508) % 360:.0f}, 70%, {(38, 55)[j % 2]}%)"
    return out


def legend_height(items: Sequence[tuple[str, str, str]]) -> int:
    """The height a chart needs for its legend's ``items`` (:meth:`Axes.legend`) to fit under its title."""
    return TOP + 8 + sum(18 + 13 * (len(_wrap(label, 26)) - 1) for label, _, _ in items) + 12


def _num(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


class Axes:
    """A plot area: each axis linear or log, data to pixels."""

    def __init__(self, x: tuple[float, float], y: tuple[float, float], *, logx: bool, logy: bool,
                 width: int = WIDTH, height: int = HEIGHT) -> None:
        self.logx, self.logy = logx, logy
        self.width, self.height = width, height
        self.x0, self.x1 = (math.log10(v) for v in x) if logx else x
        self.y0, self.y1 = (math.log10(v) for v in y) if logy else y
        if self.x1 <= self.x0:
            self.x1 = self.x0 + 1
        if self.y1 <= self.y0:
            self.y1 = self.y0 + 1
        self.parts: list[str] = []
        self.clip_id = "plot"
        """the plot area's clip path, named after the chart (several charts share a page)"""

    def px(self, v: float) -> float:
        t = math.log10(v) if self.logx else v
        return LEFT + (t - self.x0) / (self.x1 - self.x0) * (self.width - LEFT - RIGHT)

    def py(self, v: float) -> float:
        t = math.log10(v) if self.logy else v
        return self.height - BOTTOM - (t - self.y0) / (self.y1 - self.y0) * (self.height - TOP - BOTTOM)

    def _ticks(self, lo: float, hi: float, log: bool) -> list[float]:
        if log:
            return [10.0**k for k in range(math.ceil(lo - 1e-9), math.floor(hi + 1e-9) + 1)]
        step = 10 ** math.floor(math.log10((hi - lo) / 4)) if hi > lo else 1
        for m in (1, 2, 5, 10):
            if (hi - lo) / (step * m) <= 6:
                step *= m
                break
        first = math.ceil(lo / step) * step
        return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]

    def frame(self, title: str, xlabel: str, ylabel: str, yticks: bool = True) -> None:
        r, b = self.width - RIGHT, self.height - BOTTOM
        self.clip_id = f"plot-{zlib.crc32(f'{title} {self.width} {self.height}'.encode()):08x}"
        p = self.parts
        p.append(f'<rect x="{LEFT}" y="{TOP}" width="{r - LEFT}" height="{b - TOP}" fill="white" stroke="#444"/>')
        for v in self._ticks(self.x0, self.x1, self.logx):
            x = self.px(v)
            p.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{b}" stroke="#ddd"/>')
            p.append(f'<text x="{x:.1f}" y="{b + 16}" text-anchor="middle" class="tick">{escape(_tick(v, self.logx))}</text>')
        for v in self._ticks(self.y0, self.y1, self.logy) if yticks else ():
            y = self.py(v)
            p.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{r}" y2="{y:.1f}" stroke="#ddd"/>')
            p.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{escape(_tick(v, self.logy))}</text>')
        p.append(f'<text x="{(LEFT + r) / 2:.1f}" y="{self.height - 12}" text-anchor="middle">{escape(xlabel)}</text>')
        p.append(f'<text transform="translate(16,{(TOP + b) / 2:.1f}) rotate(-90)" text-anchor="middle">'
                 f'{escape(ylabel)}</text>')
        p.append(f'<text x="{LEFT}" y="{TOP - 12}" class="title">{escape(title)}</text>')

    def clip(self, x: float, y: float) -> bool:
        return LEFT - 0.5 <= x <= self.width - RIGHT + 0.5 and TOP - 0.5 <= y <= self.height - BOTTOM + 0.5

    def polyline(self, xs: Sequence[float], ys: Sequence[float], color: str, *, dash: str = "", width: float = 2,
                 label: str = "") -> None:
        pts = [(self.px(x), self.py(y)) for x, y in zip(xs, ys) if (x > 0 or not self.logx) and (y > 0 or not self.logy)]
        if len(pts) < 2:
            return
        d = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        tip = f"<title>{escape(label)}</title>" if label else ""
        self.parts.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="{width}"{extra} '
                          f'clip-path="url(#{self.clip_id})">{tip}</polyline>')

    def point(self, x: float, y: float, color: str, title: str, *, shape: str = "circle", hollow: bool = False,
              name: str = "") -> None:
        if (self.logx and x <= 0) or (self.logy and y <= 0):
            return
        cx, cy = self.px(x), self.py(y)
        fill = "none" if hollow else color
        data = f' data-point="{escape(name)}"' if name else ""
        if shape == "triangle":
            d = f"M{cx:.1f},{cy - 5:.1f} L{cx + 5:.1f},{cy + 4:.1f} L{cx - 5:.1f},{cy + 4:.1f} Z"
            el = f'<path d="{d}" fill="{fill}" stroke="{color}" stroke-width="1.4"{data}>'
        elif shape == "square":
            el = f'<rect x="{cx - 4:.1f}" y="{cy - 4:.1f}" width="8" height="8" fill="{fill}" stroke="#222"{data}>'
        else:
            el = f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4.5" fill="{fill}" stroke="{color if hollow else "#222"}" ' \
                 f'stroke-width="1.2"{data}>'
        tag = el.split(" ", 1)[0][1:]
        self.parts.append(f"{el}<title>{escape(title)}</title></{tag}>")

    def hline(self, y: float, color: str, label: str, dash: str = "6 4") -> None:
        v = self.py(y)
        self.parts.append(f'<line x1="{LEFT}" y1="{v:.1f}" x2="{self.width - RIGHT}" y2="{v:.1f}" stroke="{color}" '
                          f'stroke-width="1.5" stroke-dasharray="{dash}"><title>{escape(label)}</title></line>')

    def legend(self, items: Sequence[tuple[str, str, str]]) -> None:
        """``(label, color, shape)`` items at the right; shape: line, dash, circle, hollow, triangle, square."""
        x, y = self.width - RIGHT + 14, TOP + 8
        for label, color, shape in items:
            if shape in ("line", "dash"):
                dash = ' stroke-dasharray="6 4"' if shape == "dash" else ""
                self.parts.append(f'<line x1="{x}" y1="{y}" x2="{x + 18}" y2="{y}" stroke="{color}" stroke-width="2"'
                                  f'{dash}/>')
            elif shape == "triangle":
                self.parts.append(f'<path d="M{x + 9},{y - 5} L{x + 14},{y + 4} L{x + 4},{y + 4} Z" fill="none" '
                                  f'stroke="{color}"/>')
            elif shape == "square":
                self.parts.append(f'<rect x="{x + 5}" y="{y - 4}" width="8" height="8" fill="{color}" stroke="#222"/>')
            else:
                fill = "none" if shape == "hollow" else color
                self.parts.append(f'<circle cx="{x + 9}" cy="{y}" r="4.5" fill="{fill}" stroke="{color}"/>')
            for i, line in enumerate(_wrap(label, 26)):
                self.parts.append(f'<text x="{x + 24}" y="{y + 4 + 13 * i}" class="legend">{escape(line)}</text>')
            y += 18 + 13 * (len(_wrap(label, 26)) - 1)

    def svg(self, label: str) -> str:
        clip = (f'<defs><clipPath id="{self.clip_id}"><rect x="{LEFT}" y="{TOP}" width="{self.width - LEFT - RIGHT}" '
                f'height="{self.height - TOP - BOTTOM}"/></clipPath></defs>')
        return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width} {self.height}" width="{self.width}" '
                f'height="{self.height}" role="img" aria-label="{escape(label)}">{clip}' + "".join(self.parts) + "</svg>")


def _wrap(text: str, width: int) -> list[str]:
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return lines + ([line] if line else [])


#: SI prefixes of the powers of 1,000 a log axis labels its decades with (the axes' units are ops/s, bytes/s, ...)
SI_PREFIXES = ("", "k", "M", "G", "T", "P", "E")


def _tick(v: float, log: bool) -> str:
    """A tick's label: on a log axis each decade in one notation, an SI prefix from 1,000 up (``1k``, ``10k``, ``1M``,
    ..., ``100T``: a chart in ops/s reads in the Tops/s of its legend) and decimals below 1 (``0.1``, ``0.001``);
    on a linear axis three significant digits, or whole numbers with separators from 10,000."""
    if log:
        k = round(math.log10(v))
        if 0 <= k < 3 * len(SI_PREFIXES):
            return f"{10 ** (k % 3)}{SI_PREFIXES[k // 3]}"
        return f"{10.0 ** k:.{-k}f}" if -4 < k < 0 else f"1e{k}"
    return sig(v, 3) if abs(v) < 1e4 else f"{v:,.0f}"


def _span(values: Sequence[float], pad: float = 2.0) -> tuple[float, float]:
    pos = [v for v in values if v > 0 and math.isfinite(v)]
    lo, hi = (min(pos), max(pos)) if pos else (1.0, 10.0)
    return 10 ** math.floor(math.log10(lo / pad)), 10 ** math.ceil(math.log10(hi * pad))


# ------------------------------------------------------------------------------- the charts


def roofline_chart(r: EstimateResult) -> str:
    """Attainable ops/s against arithmetic intensity: the DRAM (and LLC) slopes, one roof per dtype, a point per
    GEMM and precision."""
    p = r.platform
    points = [(pr, g) for pr in r.precisions.values() for g in pr.gemms]
    xlo, xhi = _span([g.arithmetic_intensity for _, g in points], 4)
    best: dict[str, object] = {}
    for c in p.compute_paths:
        if c.dtype not in best or c.peak_ops_per_s > best[c.dtype].peak_ops_per_s:  # type: ignore[attr-defined]
            best[c.dtype] = c
    peaks = [c.peak_ops_per_s for c in best.values()]  # type: ignore[attr-defined]
    ylo, yhi = _span([g.attainable_ops_per_s for _, g in points] + peaks, 1.5)
    ax = Axes((xlo, xhi), (ylo, yhi), logx=True, logy=True)
    w = r.workload
    what = f"context {w.context}" if w.phase == "decode" else f"seq {w.seq_len}"
    ax.frame(f"{w.model} on {p.name}: {w.phase}, batch {w.batch}, {what}", "arithmetic intensity (ops / byte)",
             "attainable ops / s (whole platform)")
    xs = [10 ** (math.log10(xlo) + i * (math.log10(xhi) - math.log10(xlo)) / 200) for i in range(201)]
    b = p.dram_bandwidth_bytes_per_s
    legend = [(f"DRAM {sig(b / 1e9)} GB/s ({p.dram_bandwidth_kind})", "#555", "dash")]
    ax.polyline(xs, [b * x for x in xs], "#555", dash="6 4", width=1.4, label=legend[0][0])
    if any(pr.llc_resident for pr in r.precisions.values()) and p.llc_read_bytes_per_s:
        label = f"LLC {sig(p.llc_read_bytes_per_s / 1e9)} GB/s (weights resident)"
        ax.polyline(xs, [p.llc_read_bytes_per_s * x for x in xs], "#999", dash="2 3", width=1.4, label=label)
        legend.append((label, "#999", "dash"))
    for dtype, c in best.items():
        color = DTYPE_COLORS.get(dtype, "#333")
        peak = c.peak_ops_per_s  # type: ignore[attr-defined]
        label = f"{c.name}: {sig(peak / 1e12)} Tops/s"  # type: ignore[attr-defined]
        ax.polyline(xs, [min(peak, b * x) for x in xs], color, width=2.2, label=label)
        legend.append((label, color, "line"))
    shapes = ("circle", "square", "triangle")
    for i, pr in enumerate(r.precisions.values()):
        color = DTYPE_COLORS.get(pr.compute_dtype, "#333")
        shape = shapes[i % len(shapes)]
        for g in pr.gemms:
            ax.point(g.arithmetic_intensity, g.attainable_ops_per_s, color, f"{pr.name} {g.name} {g.m}x{g.n}x{g.k}: "
                     f"AI {sig(g.arithmetic_intensity)} ops/B, {sig(g.attainable_ops_per_s / 1e12)} Tops/s, "
                     f"{g.bound_by}-bound", shape=shape, name=f"{pr.name}/{g.name}")
        legend.append((f"{pr.name} GEMMs", color, shape))
    ax.legend(legend)
    return ax.svg(f"roofline chart of {w.model} on {p.name}")


def plan_chart(r: PlanResult) -> list[str]:
    """p99 latency (decoders: TTFT and TPOT) against the offered load per server, each CPU's best layout, the SLO
    as a dashed line."""
    decode = r.phase == "decode"
    panels = [("ttft_p99_s", "TTFT p99 (ms)", r.ttft_target_s), ("tpot_p99_s", "TPOT p99 (ms)", r.tpot_target_s)] \
        if decode else [("p99_s", "p99 latency (ms)", r.latency_target_s)]
    out = []
    for key, label, slo in panels:
        curves = [(c, [p for p in c.curve if getattr(p, key) is not None]) for c in r.cpus]
        curves = [(c, pts) for c, pts in curves if pts]
        xs = [p.offered_rps for _, pts in curves for p in pts]
        ys = [getattr(p, key) * 1e3 for _, pts in curves for p in pts] + ([slo * 1e3] if slo else [])
        if not xs:
            continue
        ax = Axes((0, max(xs) * 1.05), _span(ys, 1.5), logx=False, logy=True)
        ax.frame(f"{r.model} in {r.precision}: {label.split(' (')[0]} against load ({r.scenario} scenario)",
                 "offered load (requests / s per server)", label)
        legend = []
        palette = colors_for([c.cpu for c, _ in curves])
        for c, pts in curves:
            color = palette[c.cpu]
            b = c.best
            name = f"{c.cpu}: " + c.layout_label(b.instances_per_socket, b.instance_cores)
            ax.polyline([p.offered_rps for p in pts], [getattr(p, key) * 1e3 for p in pts], color, label=name)
            for p in pts:
                ax.point(p.offered_rps, getattr(p, key) * 1e3, color, f"{c.cpu}: {sig(p.offered_rps)} req/s offered, "
                         f"{label.split(' (')[0]} {sig(getattr(p, key) * 1e3)} ms, utilization {p.utilization:.0%}",
                         name=f"{c.cpu}/{p.offered_rps:g}")
            legend.append((name, color, "line"))
        if slo:
            ax.hline(slo * 1e3, "#000", f"SLO {slo * 1e3:g} ms")
            legend.append((f"SLO {slo * 1e3:g} ms", "#000", "dash"))
        ax.legend(legend)
        out.append(ax.svg(f"{label} against offered load"))
    return out


def accuracy_chart(r: AccuracyResult) -> list[str]:
    """Predicted against measured, log-log, with y = x: times (latency, one GEMM), rates (throughput, tokens/s) and
    ratios (speedups, shares) apart; the ceiling a hollow triangle, the realistic estimate a dot, a colour of its own
    per platform (:func:`colors_for`), the chart as tall as its legend needs."""
    groups = [("times (latency, one GEMM), s", ("latency", "gemm")), ("rates (throughput, tokens/s), per s",
                                                                     ("throughput", "tokens_per_s")),
              ("ratios (speedups, shares)", ("speedup", "linear_speedup", "non_gemm_speedup", "gemm_share"))]
    platforms = sorted({x.platform for x in r.rows})
    colors = colors_for(platforms)
    out = []
    for title, kinds in groups:
        rows = [x for x in r.rows if x.kind in kinds]
        if not rows:
            continue
        values = [x.measured for x in rows] + [x.ceiling for x in rows] + [x.realistic for x in rows if x.realistic]
        lo, hi = _span(values, 1.5)
        legend = [(p, colors[p], "circle") for p in platforms] + [("realistic (leave-one-platform-out)", "#777", "circle"),
                                                                  ("ceiling", "#777", "triangle")]
        ax = Axes((lo, hi), (lo, hi), logx=True, logy=True, height=max(460, legend_height(legend)))
        ax.frame(f"predicted against measured: {title}", "measured", "predicted")
        ax.polyline([lo, hi], [lo, hi], "#000", width=1, label="predicted = measured")
        for x in rows:
            c = colors[x.platform]
            what = f"{x.record}: {x.what} {x.precision}" + (f" vs {x.baseline}" if x.baseline else "")
            ax.point(x.measured, x.ceiling, c, f"{what}: measured {sig(x.measured)}, ceiling {sig(x.ceiling)}",
                     shape="triangle", hollow=True, name=f"ceiling/{x.record}/{x.what}")
            if x.realistic is not None:
                ax.point(x.measured, x.realistic, c, f"{what}: measured {sig(x.measured)}, realistic "
                         f"{sig(x.realistic)}", name=f"realistic/{x.record}/{x.what}")
        ax.legend(legend)
        out.append(ax.svg(f"accuracy: {title}"))
    return out


def check_chart(r: CheckResult) -> str:
    """Each measurement as a share of its ceiling (bars) and of the realistic estimate (dots); 100% dashed."""
    items = [(f"{x.what} {x.precision}", x.fraction_of_ceiling, x.fraction_of_realistic) for x in r.rates]
    items += [(f"{c.precision} vs {c.baseline} {row.metric}", row.fraction_of_ceiling, row.fraction_of_realistic)
              for c in r.comparisons for row in c.rows]
    n = len(items)
    height = TOP + BOTTOM + 26 * max(n, 1) + 10
    top = max([1.2] + [max(a, b) * 1.1 for _, a, b in items])
    ax = Axes((0, top * 100), (0, 1), logx=False, logy=False, height=height)
    ax.frame(f"{r.model} on {r.cpu}: measured as a share of the ceiling", "% of the ceiling (bars) and of the "
             "realistic estimate (dots)", "", yticks=False)
    band = (height - TOP - BOTTOM) / max(n, 1)
    for i, (label, f_ceiling, f_realistic) in enumerate(items):
        y = TOP + band * (i + 0.5)
        x0, x1 = ax.px(0), ax.px(f_ceiling * 100)
        color = "#d62728" if f_ceiling > 1 + 1e-9 else "#1f77b4"
        ax.parts.append(f'<rect x="{x0:.1f}" y="{y - 8:.1f}" width="{max(x1 - x0, 0.5):.1f}" height="16" fill="{color}" '
                        f'data-point="{escape(label)}"><title>{escape(label)}: {100 * f_ceiling:.0f}% of the ceiling'
                        f'</title></rect>')
        ax.parts.append(f'<text x="{ax.width - RIGHT + 8}" y="{y + 4:.1f}" class="legend">{escape(label)}</text>')
        xr = ax.px(f_realistic * 100)
        ax.parts.append(f'<circle cx="{xr:.1f}" cy="{y:.1f}" r="4" fill="#fff" stroke="#222" stroke-width="1.5">'
                        f'<title>{escape(label)}: {100 * f_realistic:.0f}% of the realistic estimate</title></circle>')
    x100 = ax.px(100)
    ax.parts.append(f'<line x1="{x100:.1f}" y1="{TOP}" x2="{x100:.1f}" y2="{height - BOTTOM}" stroke="#000" '
                    'stroke-dasharray="6 4"><title>the ceiling</title></line>')
    return ax.svg(f"measured share of the ceiling, {r.model} on {r.cpu}")
