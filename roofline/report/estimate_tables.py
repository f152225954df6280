"""Rich rendering of an :class:`EstimateResult` (the paper's Tables 4 to 7, and the Amdahl ceiling)."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from roofline.results.estimate import EstimateResult, PrecisionResult
from roofline.report.fmt import giga, mega, ms, pct, ratio, sig, tera


def render_estimate(r: EstimateResult, brief: bool = False) -> RenderableType:
    p, w = r.platform, r.workload
    if w.phase == "decode":
        shape = f"decode: batch {w.batch}, one token each, {w.context} tokens in the KV cache (M = {w.m})"
    elif w.phase == "prefill":
        shape = f"prefill: batch {w.batch} x prompt {w.seq_len} (M = {w.m})"
    else:
        shape = f"batch {w.batch} x seq {w.seq_len} (M = {w.m})"
    head = Text.assemble(
        (f"{w.model} on {p.name}", "bold"),
        f"  {p.description}\n",
        f"{shape}, {w.layers} layers; {p.sockets_used} socket(s), {p.cores} cores: whole-platform throughput, "
        "all instances together",
    )
    parts: list[RenderableType] = [head]
    if not brief:
        parts.append(platform_table(r))
        parts += [gemm_table(r, pr) for pr in r.precisions.values()]
        parts.append(llc_table(r))
    if w.phase == "decode":
        parts.append(decode_table(r))
    parts.append(speedup_table(r))
    if not brief:
        parts.append(inputs_text(r))
    if r.notes:
        parts.append(Text("\n".join(f"note: {n}" for n in r.notes), style="yellow"))
    return Group(*parts)


def decode_table(r: EstimateResult) -> Table:
    t = Table(title="Decode step: one token per sequence (roofline ceilings)", title_justify="left",
              box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for c in ("precision", "ms/token", "tokens/s", "bound", "time split", "weights MB", "KV MB", "compute at batch"):
        t.add_column(c, justify="left" if c in ("precision", "bound", "time split") else "right", no_wrap=True)
    for pr in r.precisions.values():
        d = pr.decode
        if d is None:
            continue
        short = {"compute": "C", "weights": "W", "kv-cache": "KV", "activations": "A"}
        split = " ".join(f"{short[part.rsplit(' ', 1)[0]]} {part.rsplit(' ', 1)[1]}" for part in d.bound_detail.split(", "))
        t.add_row(pr.name, ms(d.token_latency_s), sig(d.tokens_per_s), d.bound, split, mega(d.weight_bytes),
                  f"{mega(d.kv_cache_bytes)}", str(d.compute_bound_batch) if d.compute_bound_batch else "> 65536")
    kv = {pr.decode.kv_dtype for pr in r.precisions.values() if pr.decode}
    t.caption = (f"time split: share of the step in compute-bound ops (C) and in memory-bound ones streaming weights "
                 f"(W), the KV cache (KV, {'/'.join(sorted(kv))}) or activations (A); compute at batch: where the "
                 "step's GEMMs together turn compute-bound")
    t.caption_justify = "left"
    return t


def platform_table(r: EstimateResult) -> Table:
    p = r.platform
    bw = f"{giga(p.dram_bandwidth_bytes_per_s)} GB/s DRAM ({p.dram_bandwidth_kind}, all sockets)"
    t = Table(title=f"Compute paths and balance points (paper Table 4) vs {bw}", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for c in ("path", "dtype", "GHz", "ops/clk/core", "peak Tops/s", "BP ops/B", "used by"):
        t.add_column(c, justify="left" if c in ("path", "dtype", "used by") else "right")
    users: dict[str, list[str]] = {}
    for name, pr in r.precisions.items():
        users.setdefault(pr.compute_path, []).append(name)
    for c in p.compute_paths:
        t.add_row(
            c.name, c.dtype, sig(c.frequency_hz / 1e9), f"{c.ops_per_cycle_per_core:g}",
            tera(c.peak_ops_per_s), sig(c.dram_balance_point), ", ".join(users.get(c.name, [])),
        )
    return t


def gemm_table(r: EstimateResult, pr: PrecisionResult) -> Table:
    e = pr.element_bytes
    title = (
        f"{pr.name} on {pr.compute_path}: peak {tera(pr.peak_ops_per_s)} Tops/s, e_x/e_w/e_y = "
        f"{e['x']:g}/{e['w']:g}/{e['y']:g} B (paper Tables 5-7; per call, AI and BP in ops/B)"
    )
    t = Table(title=title, title_justify="left", show_footer=True, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    cols = [("GEMM", "all"), ("M x N x K", ""), ("calls", ""), ("GFLOP", ""), ("MB", ""),
            ("AI", ""), ("BP", ""), ("bound", ""), ("B GB/s", ""), ("Tops/s", tera(pr.aggregate_ops_per_s))]
    for name, foot in cols:
        t.add_column(name, footer=foot, justify="left" if name in ("GEMM", "bound") else "right", no_wrap=True)
    for g in pr.gemms:
        bound = Text(g.bound, style="yellow" if g.bound == "memory" else "cyan")
        bw = giga(g.bandwidth_bytes_per_s) + ("*" if g.bandwidth_kind == "llc-effective" else "")
        name = g.name if g.recipe == pr.name else f"{g.name} ({g.recipe})"
        t.add_row(
            name, f"{g.m}x{g.n}x{g.k}", str(g.count), sig(g.flops / 1e9), mega(g.bytes),
            sig(g.arithmetic_intensity), sig(g.balance_point), bound, bw, tera(g.attainable_ops_per_s),
        )
    step = {"decode": "decode step", "prefill": "prefill"}.get(r.workload.phase, "forward pass")
    notes = [f"aggregate {tera(pr.aggregate_ops_per_s)} Tops/s: GEMM time {ms(pr.gemm_time_s)} ms per {step}; "
             f"with the modelled non-GEMM work {ms(pr.step_time_s)} ms"]
    notes += pr.notes
    if pr.llc_resident:
        notes.append("* B_eff: weights streamed from the LLC, X and Y from DRAM")
    if notes:
        t.caption = "\n".join(notes)
        t.caption_justify = "left"
    return t


def llc_table(r: EstimateResult) -> Table:
    p = r.platform
    llc_bw = f"{giga(p.llc_read_bytes_per_s)} GB/s (all sockets)" if p.llc_read_bytes_per_s else "not given"
    t = Table(
        title=f"LLC residency of the GEMM weights (paper Table 6): {mega(p.llc_bytes_per_domain)} MB per LLC domain, "
        f"LLC read {llc_bw}",
        title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
    )
    for c in ("precision", "weights MB", "share of LLC", "resident", "GB/s over shapes"):
        t.add_column(c, justify="left" if c in ("precision", "resident") else "right")
    for pr in r.precisions.values():
        bws = [g.bandwidth_bytes_per_s for g in pr.gemms]
        kind = "B_eff" if pr.llc_resident else "B_mem"
        span = giga(min(bws)) if giga(min(bws)) == giga(max(bws)) else f"{giga(min(bws))}-{giga(max(bws))}"
        t.add_row(pr.name, mega(pr.weight_bytes), pct(pr.llc_fraction), "yes" if pr.llc_resident else "no",
                  f"{kind} {span}")
    return t


def speedup_table(r: EstimateResult) -> Table:
    t = Table(title="End-to-end ceiling (Amdahl): S = 1 / (f/s + (1-f)/s_non), and the realistic estimate (+ named "
              "overheads, roofline check)", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for c in ("precision", "vs", "GEMM speedup s", "f_GEMM", "non-GEMM s_non", "ceiling S", "realistic"):
        t.add_column(c, justify="left" if c in ("precision", "vs") else "right")
    for s in r.speedups:
        t.add_row(s.precision, s.baseline, ratio(s.gemm_speedup), f"{s.f_gemm:.3f}", ratio(s.non_gemm_speedup),
                  Text(ratio(s.end_to_end_ceiling), style="bold"), ratio(s.realistic))
    lines = []
    for label, attr in (("s", "gemm_speedup_source"), ("s_non", "non_gemm_speedup_source")):
        by_source: dict[str, list[str]] = {}
        for sp in r.speedups:
            by_source.setdefault(getattr(sp, attr), []).append(sp.precision)
        for source, names in by_source.items():
            who = "" if len(by_source) == 1 else f" ({', '.join(names)})"
            lines.append(f"{label}{who} from {source}")
    if r.speedups:
        lines.insert(0, f"f_GEMM from {r.speedups[0].f_gemm_source}")
    for sp in r.speedups:
        named = [o for o in sp.overheads if o.seconds > 0]
        if named:
            lines.append(f"realistic {sp.precision}: ceiling + " + ", ".join(
                f"{o.name} {100 * o.share_of_baseline:.1f}%" for o in named) + " of the baseline's time"
                + ("" if r.calibration else " (uncalibrated: no kernel efficiency or dispatch)"))
    t.caption = "\n".join(lines)
    t.caption_justify = "left"
    return t


def inputs_text(r: EstimateResult) -> Text:
    out = Text()
    flagged = [i for i in r.inputs if i.kind not in ("datasheet", "measured")]
    if flagged:
        out.append("Inputs that are not datasheet or measured facts:\n", style="bold")
        for i in flagged:
            out.append(f"  {i.what} = {i.value} ({i.kind}): {i.source}\n")
    p = r.platform
    out.append(f"DRAM bandwidth used: {p.dram_bandwidth_kind}. ", style="bold")
    out.append("Non-GEMM times are modelled (roofline of attention, norms, activations, residual adds).\n")
    out.append("Left out: ", style="bold")
    out.append("; ".join(f"{x.what} ({x.why})" for x in r.left_out))
    return out
