"""The roofline chart: log-log, DRAM and LLC slopes, one ceiling per compute path, a point per
GEMM shape and precision, and (optionally) what a `validate` report measured beside each prediction.

matplotlib is an optional extra (``pip install 'roofline[plot]'``), imported only here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from roofline.errors import UserError
from roofline.report.fmt import sig
from roofline.results.estimate import EstimateResult
from roofline.results.validate import ValidateResult

COLORS = {"fp32": "#1f77b4", "bf16": "#2ca02c", "int8": "#d62728", "fp16": "#9467bd"}
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
LABEL_OFFSETS = [(7, 7), (7, -12), (-38, 7), (-38, -12), (7, 16), (-38, 16)]


def _matplotlib(who: str = "roofline plot"):
    try:
        import matplotlib
    except ImportError:
        raise UserError(f"{who} needs matplotlib: pip install 'roofline[plot]'") from None
    matplotlib.use("Agg")
    # names come from files and flags: a '$' is a dollar sign, never mathtext (x$\\frac{$y would fail to draw)
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    return plt


def measured_points(estimate: EstimateResult, report: ValidateResult) -> list[dict]:
    """Shapes of a `validate` report that match a predicted GEMM of the estimate (same M, N, K and recipe)."""
    from roofline.spec.precision import VARIANT_RECIPES

    predicted = {(g.m, g.n, g.k, pr.name): g for pr in estimate.precisions.values() for g in pr.gemms}
    out = []
    for s in report.shapes:
        recipe = VARIANT_RECIPES.get(s.precision, s.precision)
        g = predicted.get((s.m, s.n, s.k, recipe))
        if g is not None and s.measured_ops_per_s:
            out.append({"name": s.name, "precision": recipe, "ai": g.arithmetic_intensity,
                        "predicted": g.attainable_ops_per_s, "measured": s.measured_ops_per_s})
    return out


def check_chart_path(path: str | Path, flag: str = "-o") -> None:
    if Path(path).suffix.lower() not in (".svg", ".png"):
        raise UserError(f"{flag} {path}: the chart is written as .svg or .png")


def plot_roofline(r: EstimateResult, path: str | Path, measured: list[dict] | None = None,
                  title: str | None = None) -> dict[str, int]:
    """Draw the chart to ``path`` (.svg or .png); returns how many points of each kind were drawn."""
    path = Path(path)
    check_chart_path(path)
    plt = _matplotlib()
    p = r.platform
    points = [(pr, g) for pr in r.precisions.values() for g in pr.gemms]
    ais = [g.arithmetic_intensity for _, g in points]
    lo, hi = 10 ** np.floor(np.log10(min(ais) / 4)), 10 ** np.ceil(np.log10(max(ais) * 4))
    x = np.logspace(np.log10(lo), np.log10(hi), 400)
    fig, ax = plt.subplots(figsize=(9, 6), dpi=110)
    b_mem = p.dram_bandwidth_bytes_per_s
    ax.loglog(x, b_mem * x, color="0.35", lw=1.2, ls="--", label=f"DRAM {b_mem / 1e9:,.0f} GB/s ({p.dram_bandwidth_kind})")
    if any(pr.llc_resident for pr in r.precisions.values()) and p.llc_read_bytes_per_s:
        ax.loglog(x, p.llc_read_bytes_per_s * x, color="0.35", lw=1.2, ls=":",
                  label=f"LLC {p.llc_read_bytes_per_s / 1e9:,.0f} GB/s (weights resident)")
    best: dict[str, object] = {}
    for c in p.compute_paths:
        if c.dtype not in best or c.peak_ops_per_s > best[c.dtype].peak_ops_per_s:
            best[c.dtype] = c
    for dtype, c in best.items():
        ax.loglog(x, np.minimum(c.peak_ops_per_s, b_mem * x), color=COLORS.get(dtype, "k"), lw=2, alpha=0.8,
                  label=f"{c.name}: {sig(c.peak_ops_per_s / 1e12)} Tops/s")
    counts = {"predicted": 0, "measured": 0}
    for i, pr in enumerate(r.precisions.values()):
        color = COLORS.get(pr.compute_dtype, "k")
        marker = MARKERS[i % len(MARKERS)]
        for j, g in enumerate(pr.gemms):
            ax.loglog([g.arithmetic_intensity], [g.attainable_ops_per_s], ls="none", marker=marker, ms=8,
                      color=color, markeredgecolor="k", gid=f"point-{pr.name}-{g.name}")
            if i == len(r.precisions) - 1:  # name the shapes once, on the last precision's points
                ax.annotate(g.name, (g.arithmetic_intensity, g.attainable_ops_per_s), textcoords="offset points",
                            xytext=LABEL_OFFSETS[j % len(LABEL_OFFSETS)], fontsize=7, color="0.25")
            counts["predicted"] += 1
        ax.plot([], [], ls="none", marker=marker, color=color, markeredgecolor="k", label=f"{pr.name} (predicted)")
    for m in measured or []:
        color = COLORS.get("int8" if m["precision"].startswith("int8") else m["precision"], "k")
        ax.loglog([m["ai"], m["ai"]], [m["predicted"], m["measured"]], color=color, lw=0.8, alpha=0.6)
        ax.loglog([m["ai"]], [m["measured"]], ls="none", marker="o", ms=7, mfc="none", mec=color, mew=1.5,
                  gid=f"measured-{m['precision']}-{m['name']}")
        counts["measured"] += 1
    if measured:
        ax.plot([], [], ls="none", marker="o", mfc="none", mec="k", label="measured (validate)")
    w = r.workload
    ys = [g.attainable_ops_per_s for _, g in points] + [m["measured"] for m in measured or []]
    top = max(max(c.peak_ops_per_s for c in best.values()), max(ys))
    ax.set_ylim(min(ys) / 4, top * 3)
    ax.set_xlim(lo, hi)
    ax.set_title(title or f"{w.model} on {p.name}: {w.phase}, batch {w.batch}, "
                 f"{'context ' + str(w.context) if w.phase == 'decode' else 'seq ' + str(w.seq_len)}", fontsize=11)
    ax.set_xlabel("arithmetic intensity (ops / byte)")
    ax.set_ylabel("attainable throughput (ops / s, whole platform)")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return counts


def plot_accuracy(r, path: str | Path) -> None:
    """Predicted against measured for every absolute figure (log-log): the ceiling and the realistic
    estimate (leave-one-platform-out), one colour per platform, the y = x line."""
    path = Path(path)
    check_chart_path(path, "--plot")
    plt = _matplotlib()
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), dpi=110)
    rows = [x for x in r.rows if x.kind in ("latency", "gemm")]
    ratios = [x for x in r.rows if x.kind not in ("latency", "gemm", "throughput")]
    platforms = sorted({x.platform for x in r.rows})
    colors = {p: plt.cm.tab10(i % 10) for i, p in enumerate(platforms)}
    for ax, data, title, unit in ((axes[0], rows, "times (latency, single GEMM)", "s"),
                                  (axes[1], ratios, "ratios (speedups, shares)", "")):
        vals = [x.measured for x in data] + [x.ceiling for x in data] + [x.realistic for x in data if x.realistic]
        if not vals:
            ax.set_visible(False)
            continue
        lo, hi = min(vals) / 1.5, max(vals) * 1.5
        ax.plot([lo, hi], [lo, hi], color="black", lw=0.8)
        for x in data:
            c = colors[x.platform]
            ax.scatter(x.measured, x.ceiling, marker="^", facecolors="none", edgecolors=c, s=30)
            if x.realistic is not None:
                ax.scatter(x.measured, x.realistic, marker="o", color=c, s=22)
        ax.set_xscale("log"), ax.set_yscale("log")
        ax.set_xlim(lo, hi), ax.set_ylim(lo, hi)
        ax.set_xlabel(f"measured {unit}".strip()), ax.set_ylabel(f"predicted {unit}".strip())
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", lw=0.3, alpha=0.5)
    handles = [plt.Line2D([], [], marker="o", ls="", color=colors[p], label=p) for p in platforms]
    handles += [plt.Line2D([], [], marker="o", ls="", color="gray", label="realistic (leave-one-platform-out)"),
                plt.Line2D([], [], marker="^", ls="", markerfacecolor="none", color="gray", label="ceiling")]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path)
    plt.close(fig)
