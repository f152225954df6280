"""The latency-vs-load chart of a capacity plan (``roofline plan --plot``): for each CPU's best layout,
the simulated p99 against the offered load (its 95% interval shaded), the SLO as a horizontal line
and the plan's rate marked; decoders get two panels, TTFT p99 and TPOT p99.

matplotlib is an optional extra (``pip install 'roofline[plot]'``), imported only here.
"""

from __future__ import annotations

from pathlib import Path

from roofline.report.plot import _matplotlib, check_chart_path
from roofline.results.plan import PlanResult

__all__ = ["check_chart_path", "plot_plan"]


def plot_plan(r: PlanResult, path: str | Path) -> int:
    """Draw the chart to ``path`` (.svg or .png); returns the number of curves drawn."""
    path = Path(path)
    check_chart_path(path, "--plot")
    plt = _matplotlib("roofline plan --plot")
    decode = r.phase == "decode"
    panels = [("ttft_p99_s", "TTFT p99 (ms)", r.ttft_target_s), ("tpot_p99_s", "TPOT p99 (ms)", r.tpot_target_s)] \
        if decode else [("p99_s", "p99 latency (ms)", r.latency_target_s)]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.8), dpi=110, squeeze=False)
    colors = plt.cm.tab10.colors
    drawn = 0
    for ax, (key, label, slo) in zip(axes[0], panels):
        for k, c in enumerate(r.cpus):
            pts = [p for p in c.curve if getattr(p, key) is not None]
            if not pts:
                continue
            color = colors[k % len(colors)]
            x = [p.offered_rps for p in pts]
            y = [getattr(p, key) * 1e3 for p in pts]
            b = c.best
            ax.plot(x, y, marker="o", ms=3.5, lw=1.5, color=color, gid=f"curve-{c.cpu}",
                    label=f"{c.cpu}: " + c.layout_label(b.instances_per_socket, b.instance_cores))
            if key == "p99_s":
                ci = [(p.offered_rps, p.p99_ci_s) for p in pts if p.p99_ci_s is not None]
                if ci:
                    ax.fill_between([v for v, _ in ci], [max(lo, 1e-12) * 1e3 for _, (lo, hi) in ci],
                                    [hi * 1e3 for _, (lo, hi) in ci], color=color, alpha=0.15, lw=0)
            if r.scenario == "server" and c.meets and b.rps_per_server > 0:
                ax.axvline(b.rps_per_server, color=color, lw=0.8, ls=":")
            drawn += 1
        if slo is not None:
            ax.axhline(slo * 1e3, color="black", lw=1.2, ls="--", label=f"SLO {slo * 1e3:g} ms")
        ax.set_yscale("log")
        ax.set_xlabel("offered load (requests / s per server)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize=8, loc="upper left")
    what = (f"prompt {r.seq_len}, output {r.output_len} tokens" if decode else f"{r.lengths.description}")
    fig.suptitle(f"{r.model} in {r.precision}, {what}\nthe best layout per CPU under load ({r.scenario} scenario; "
                 + (f"stack {r.stack})" if r.stack else "no stack profile)"), fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return drawn
