"""Rich rendering of a capacity plan."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from roofline.report.fmt import ms, sig
from roofline.results.plan import PlanResult


def _table(title: str, cols: list[str], left: tuple[str, ...]) -> Table:
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for c in cols:
        t.add_column(c, justify="left" if c in left else "right", no_wrap=True)
    return t


def render_plan(r: PlanResult, all_layouts: bool = True) -> RenderableType:
    target = f"{sig(r.target_rps)} req/s" if r.target_rps else "no load target"
    lat = f"latency target {r.latency_target_s * 1e3:g} ms" if r.latency_target_s else "no latency target"
    head = Text.assemble((f"plan {r.model} in {r.precision}", "bold"),
                         f": batch {r.batch} x seq {r.seq_len} per instance call; {target}, {lat}, "
                         f"{r.utilization:.0%} planned utilization")
    parts: list[RenderableType] = [head]
    if all_layouts:
        for c in r.cpus:
            t = _table(f"{c.cpu}: {c.description}; weights {'resident in' if c.weights_llc_resident else 'beyond'} "
                       f"the LLC", ["cores/inst", "inst/socket", "latency ms", "req/s/inst", "req/s/socket",
                                    "req/s/server", "bound", "meets"], left=("bound", "meets"))
            for x in c.layouts:
                meets = "-" if x.meets_latency is None else ("yes" if x.meets_latency else "no")
                style = "bold" if x is c.best or x == c.best else ""
                t.add_row(str(x.cores_per_instance), str(x.instances_per_socket), ms(x.latency_s), sig(x.instance_rps),
                          sig(x.socket_rps), sig(x.server_rps), x.bound, meets, style=style)
            parts.append(t)
    s = _table("Best layout per CPU", ["cpu", "layout", "latency ms", "req/s/server", "bound", "servers",
                                       "$/hour", "$ per M req"], left=("cpu", "layout", "bound"))
    for c in r.cpus:
        b = c.best
        s.add_row(c.cpu, f"{b.instances_per_socket} x {b.cores_per_instance} cores x {c.sockets} sockets",
                  ms(b.latency_s), sig(b.server_rps), b.bound, "-" if c.servers_needed is None else str(c.servers_needed),
                  "-" if c.price_per_hour is None else f"{c.price_per_hour:g}",
                  "-" if c.cost_per_million_requests is None else f"{c.cost_per_million_requests:.3g}")
    parts.append(s)
    notes = [f"{c.cpu}: {c.best_reason}" for c in r.cpus] + [n for c in r.cpus for n in c.notes] + r.notes
    parts.append(Text("\n".join(notes)))
    return Group(*parts)
