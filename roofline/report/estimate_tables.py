"""Rich rendering of an :class:`EstimateResult`: the headline, then the paper's Tables 4 to 7 and the
Amdahl ceiling."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from roofline.report.energy_lines import estimate_line
from roofline.report.estimate_headline import bands, headline
from roofline.report.fmt import giga, mega, ms, pct, ratio, realistic_basis, sig, tera
from roofline.report.headline import to_rich
from roofline.report.style import document, section, table
from roofline.results.estimate import EstimateResult, PrecisionResult

#: the tensor classes of ``PrecisionResult.levels``, as the tables name them
LEVEL_NAMES = {"weights": "weights", "activations": "activations", "non_gemm": "non-GEMM", "kv_cache": "KV cache"}


def render_estimate(r: EstimateResult, brief: bool = False) -> RenderableType:
    sections: list[RenderableType] = [platform_table(r), *ceilings_table(r),
                                      *(gemm_table(r, pr) for pr in r.precisions.values()), llc_table(r)]
    if r.workload.phase == "decode":
        sections.append(decode_table(r))
    sections += [speedup_table(r), inputs_text(r)]
    return document(to_rich(headline(r)), sections, brief=brief)


# ------------------------------------------------------------------------------- the sections


def platform_table(r: EstimateResult) -> RenderableType:
    p = r.platform
    t = table(["path", "dtype", "GHz", "ops/clk/core", "peak Tops/s", "BP ops/B", "used by"],
              left=("path", "dtype", "used by"), wrap=("used by",))
    users: dict[str, list[str]] = {}
    for name, pr in r.precisions.items():
        users.setdefault(pr.compute_path, []).append(name)
    for c in p.compute_paths:
        t.add_row(c.name, c.dtype, sig(c.frequency_hz / 1e9), f"{c.ops_per_cycle_per_core:g}",
                  tera(c.peak_ops_per_s), sig(c.dram_balance_point), ", ".join(users.get(c.name, [])))
    notes = [f"{p.sockets_used} socket(s), {p.cores} cores; BP: balance point against DRAM"]
    if r.memory_model == "levels":
        levels = [f"{name} {giga(bw)} GB/s" for name, bw in (("L2", p.l2_read_bytes_per_s),
                                                              ("LLC", p.llc_read_bytes_per_s)) if bw]
        notes.append("memory model levels: each tensor priced at the cache level that holds it ("
                     + ", ".join([*levels, f"DRAM {giga(p.dram_bandwidth_bytes_per_s)} GB/s"])
                     + "); --memory-model paper: the reference paper's pricing")
    else:
        notes.append("memory model paper: X, Y and the non-GEMM work from DRAM, weights from the LLC when they fit")
    return section(f"Compute paths and balance points (paper Table 4), against {giga(p.dram_bandwidth_bytes_per_s)} "
                   f"GB/s DRAM ({p.dram_bandwidth_kind}, all sockets"
                   f"{_spanning(p)})",
                   t, notes)


def ceilings_table(r: EstimateResult) -> list[RenderableType]:
    """The attainable ceiling, the bound and the realistic estimate side by side (levels model)."""
    if r.memory_model == "paper":
        return [section("Energy", None, [estimate_line(r)])] if r.energy is not None else []
    unit = "tok/s" if r.workload.phase == "decode" else "seq/s"
    t = table(["precision", f"attainable {unit}", f"bound {unit}", f"realistic {unit}", "of attainable"],
              left=("precision",))
    for name, pr in r.precisions.items():
        bound = pr.bound_throughput_per_s
        t.add_row(name, sig(pr.throughput_per_s), sig(bound) if bound else "-", sig(pr.realistic_throughput_per_s),
                  pct(pr.realistic_throughput_per_s / pr.throughput_per_s))
    return [section("Ceilings", t, [
        "attainable: the nominal all-core clock of the busy cores' ISA (with fewer busy, sliding up to the single-core "
        "boost at one), "
        "STREAM-class DRAM bandwidth, datasheet ops per cycle; bound: the highest clock the datasheet allows and the "
        "theoretical bandwidth, which no real run may beat" + ("" if r.ceiling == "attainable" else
                                                              "; --ceiling bound: the figures above are the bound's"),
        estimate_line(r)])]


def gemm_table(r: EstimateResult, pr: PrecisionResult) -> RenderableType:
    e = pr.element_bytes
    t = table(["GEMM", "M x N x K", "calls", "GFLOP", "MB", "AI", "BP", "bound", "B GB/s", "Tops/s"],
              left=("GEMM", "bound"), wrap=("GEMM",), footers=["all", "", "", "", "", "", "", "", "", tera(pr.aggregate_ops_per_s)])
    for g in pr.gemms:
        bw = giga(g.bandwidth_bytes_per_s) + ("*" if g.bandwidth_kind == "llc-effective" else "")
        name = g.name if g.recipe == pr.name else f"{g.name} ({g.recipe})"
        t.add_row(name, f"{_dim(g.m)}x{g.n}x{g.k}", _dim(g.count), sig(g.flops / 1e9), mega(g.bytes),
                  sig(g.arithmetic_intensity), sig(g.balance_point), g.bound_by, bw, tera(g.attainable_ops_per_s))
    step = {"decode": "decode step", "prefill": "prefill"}.get(r.workload.phase, "forward pass")
    notes = [f"aggregate {tera(pr.aggregate_ops_per_s)} Tops/s: GEMM time {ms(pr.gemm_time_s)} ms per {step} (whole "
             f"platform); with the modelled non-GEMM work {ms(pr.step_time_s)} ms",
             "read from: " + ", ".join(f"{LEVEL_NAMES.get(k, k)} {v}" for k, v in pr.levels.items() if v != "none")]
    notes += pr.notes
    if pr.llc_resident and r.memory_model == "paper":
        notes.append("* B_eff: weights streamed from the LLC, X and Y from DRAM")
    return section(f"GEMMs in {pr.name} on {pr.compute_path}: peak {tera(pr.peak_ops_per_s)} Tops/s, e_x/e_w/e_y = "
                   f"{e['x']:g}/{e['w']:g}/{e['y']:g} B (paper Tables 5-7; per call, AI and BP in ops/B)", t, notes)


def _dim(x: int | float) -> str:
    return str(x) if float(x).is_integer() else sig(x)


def llc_table(r: EstimateResult) -> RenderableType:
    p = r.platform
    llc_bw = f"{giga(p.llc_read_bytes_per_s)} GB/s (all sockets)" if p.llc_read_bytes_per_s else "not given"
    t = table(["precision", "weights MB", "of LLC", "resident", "read from", "GB/s"],
              left=("precision", "resident", "read from"))
    for pr in r.precisions.values():
        bws = [g.bandwidth_bytes_per_s for g in pr.gemms]
        if r.memory_model == "levels":
            source = pr.levels.get("weights", "DRAM")
        else:
            source = "B_eff" if pr.llc_resident else "B_mem"
        span = giga(min(bws)) if giga(min(bws)) == giga(max(bws)) else f"{giga(min(bws))}-{giga(max(bws))}"
        t.add_row(pr.name, mega(pr.weight_set_bytes or pr.weight_bytes), pct(pr.llc_fraction),
                  "yes" if pr.llc_resident else "no", source, span)
    return section(f"LLC residency of the GEMM weights (paper Table 6): {mega(p.llc_bytes_per_domain)} MB per LLC "
                   f"domain, LLC read {llc_bw}", t, ["of LLC: the weights over one LLC domain; GB/s: the bandwidth "
                                                     "each GEMM gets, over the shapes"])


def decode_table(r: EstimateResult) -> RenderableType:
    t = table(["precision", "ms/token", "tokens/s", "bound", "time split", "weights MB", "KV MB", "compute at batch"],
              left=("precision", "bound", "time split"), wrap=("time split", "compute at batch"))
    short = {"compute": "C", "weights": "W", "kv-cache": "KV", "activations": "A"}
    for pr in r.precisions.values():
        d = pr.decode
        if d is None:
            continue
        split = " ".join(f"{short[part.rsplit(' ', 1)[0]]} {part.rsplit(' ', 1)[1]}" for part in d.bound_detail.split(", "))
        t.add_row(pr.name, ms(d.token_latency_s), sig(d.tokens_per_s), d.bound, split, mega(d.weight_bytes),
                  mega(d.kv_cache_bytes), str(d.compute_bound_batch) if d.compute_bound_batch else "> 65536")
    kv = {pr.decode.kv_dtype for pr in r.precisions.values() if pr.decode}
    return section("Decode step: one token per sequence, whole platform (roofline ceilings)", t, [
        f"time split: share of the step in compute-bound ops (C) and in memory-bound ones streaming weights (W), "
        f"the KV cache (KV, {'/'.join(sorted(kv))}) or activations (A); compute at batch: where the step's GEMMs "
        "together turn compute-bound"])


def speedup_table(r: EstimateResult) -> RenderableType:
    t = table(["precision", "vs", "GEMM s", "f_GEMM", "s_non", "ceiling S", "realistic"], left=("precision", "vs"))
    for s in r.speedups:
        t.add_row(s.precision, s.baseline, ratio(s.gemm_speedup), f"{s.f_gemm:.3f}", ratio(s.non_gemm_speedup),
                  Text(ratio(s.end_to_end_ceiling), style="bold"), ratio(s.realistic))
    lines = []
    if r.speedups:
        lines.append(f"f_GEMM from {r.speedups[0].f_gemm_source}")
    for label, attr in (("s", "gemm_speedup_source"), ("s_non", "non_gemm_speedup_source")):
        by_source: dict[str, list[str]] = {}
        for sp in r.speedups:
            by_source.setdefault(getattr(sp, attr), []).append(sp.precision)
        for source, names in by_source.items():
            who = "" if len(by_source) == 1 else f" ({', '.join(names)})"
            lines.append(f"{label}{who} from {source}")
    for sp in r.speedups:
        named = [o for o in sp.overheads if o.seconds > 0]
        if named:
            lines.append(f"realistic {sp.precision}: ceiling + " + ", ".join(
                f"{o.name} {100 * o.share_of_baseline:.1f}%" for o in named) + " of the baseline's time")
    lines.append(f"realistic ({realistic_basis(r.calibration, r.stack, r.realistic_accuracy, bands(r))})")
    return section("End-to-end ceiling (Amdahl): S = 1 / (f/s + (1-f)/s_non), s the GEMM speedup, s_non the "
                   "non-GEMM one, and the realistic estimate", t, lines)


def inputs_text(r: EstimateResult) -> RenderableType:
    t = table(["input", "kind", "source"], left=("input", "kind", "source"), wrap=("source",))
    for i in r.inputs:
        if i.kind not in ("datasheet", "measured"):
            t.add_row(f"{i.what} = {i.value}", i.kind, i.source)
    out = table(["left out", "why"], left=("left out", "why"), wrap=("left out", "why"))
    for x in r.left_out:
        out.add_row(x.what, x.why)
    return Group(
        section("Inputs that are not datasheet or measured facts", t, [
            f"DRAM bandwidth used: {r.platform.dram_bandwidth_kind}; non-GEMM times are modelled (roofline of "
            "attention, norms, activations, residual adds)"]),
        Text(""), section("What the estimate leaves out", out))


def _spanning(p) -> str:
    """How the memory of a layout over several sockets is priced (nothing for an instance per socket)."""
    if not p.layout:
        return ""
    if p.layout.tensor_parallel > 1:
        return f"; {p.layout.tensor_parallel} tensor-parallel ranks, each reading its own domain's memory"
    return "; one process over them, capped at 4 x the link between them" if p.layout.spans_sockets else ""
