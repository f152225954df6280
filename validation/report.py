"""Rich tables of a validation run: per-shape kernels, the encoder, and the paper's Table 14."""

from __future__ import annotations

from collections import Counter

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from roofline.report.fmt import giga, ms, sig
from roofline.results.validate import ValidateResult


def short_kernel(described: str) -> str:
    """The table label of a kernel description ('onednn.qlinear_pointwise x8 (uint8 activations)' -> 'qlinear(u8) x8')."""
    import re

    from roofline.validation.compiled import SHORT

    first = described.split(", ")[0]
    m = re.match(r"(.+?) x(\d+)(?: \((\w+) activations\))?$", first)
    if not m:
        return described
    name, count, act = m.groups()
    label = SHORT.get(name, name) + ({"uint8": "(u8)", "int8": "(s8)"}.get(act, "") if act else "")
    more = "+" if ", " in described else ""
    return f"{label}{more}" if count == "1" else f"{label} x{count}{more}"


CAUSES = {"local": "something on this machine", "neighbours": "the hypervisor's neighbours"}


def contention_line(r: ValidateResult) -> str:
    """One line on the contention canary: a warning naming the cause and what to do when rows had to keep
    contended rounds; what it saw otherwise."""
    c = r.contention
    if c is None:
        return "contention: not checked"
    seen = f"worst canary {c.worst_ratio:.2f}x the reference" + (
        f", lowest CPU share {c.lowest_cpu_share:.0%}" if c.lowest_cpu_share is not None else "") + (
        f", worst steal {c.worst_steal:.0%}" if c.worst_steal is not None else "") + (
        f", other processes up to {c.worst_other_cpus:.2f} CPUs" if c.worst_other_cpus is not None else "") + (
        f", clock down to {c.lowest_clock_hz / 1e9:.2f} GHz (probe {c.probe_clock_hz / 1e9:.2f})"
        if c.lowest_clock_hz and c.probe_clock_hz else "")
    if c.unresolved:
        cause = CAUSES.get(c.cause or "", "cause unknown")
        return (f"warning: the host was busy ({cause}): {c.flagged_rows} row(s) kept contended timing rounds after "
                f"{c.reruns} re-run(s) and are flagged 'contention' ({seen}); {c.advice or 'rerun when it is quiet'}")
    rerun = f"; {c.reruns} contended round(s) re-run" if c.reruns else ""
    advice = f"; {c.advice}" if c.advice else ""
    return f"contention: none kept ({c.samples} canary samples, {seen}{rerun}){advice}"


def violation_rows(r: ValidateResult) -> list[tuple[str, str | None]]:
    """(row, suspect input) of every row measured faster than its ceiling."""
    out = [(f"{s.name} {s.precision}", s.suspect) for s in r.shapes if s.ceiling_violation]
    out += [(f"decode {d.precision} M={d.m}", d.suspect) for d in r.decode if d.ceiling_violation]
    out += [(f"encoder {e.precision}", e.suspect) for e in r.encoder if e.ceiling_violation]
    out += [(f"{e.precision} vs {e.baseline}", e.suspect) for e in r.end_to_end if e.ceiling_violation]
    return out


def violation_line(r: ValidateResult) -> str | None:
    """A warning when rows beat their ceilings: the model's inputs are wrong there, and which to suspect."""
    rows = violation_rows(r)
    if not rows:
        return None
    suspects = Counter(s for _, s in rows if s)
    named = ", ".join(f"the {s} ({n} row{'s' if n > 1 else ''})" for s, n in suspects.most_common())
    return (f"warning: {len(rows)} row(s) ran faster than their ceiling ({', '.join(w for w, _ in rows[:4])}"
            f"{', ...' if len(rows) > 4 else ''}): an error in the model's inputs, not a faster kernel; suspect "
            f"{named or 'the inputs'}; each row's 'ceiling violation' flag names the value and its source")


def _f(x: float | None, fmt=lambda v: f"{v:.2f}") -> str:
    return "-" if x is None else fmt(x)


def _table(title: str, columns: list[str], left: tuple[str, ...] = ()) -> Table:
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for c in columns:
        t.add_column(c, justify="left" if c in left else "right", no_wrap=True)
    return t


def render_validate(r: ValidateResult) -> RenderableType:
    h = r.host
    isa = " ".join(k for k, v in h.flags.items() if v)
    head = Text.assemble(
        (f"validate {r.model}", "bold"),
        f"  {r.layers} layers, batch {r.batch} x seq {r.seq_len}{' (--quick)' if r.quick else ''}\n",
        f"host: {h.cpu_model} ({h.microarchitecture}), {h.threads} threads of {h.cores} cores; {isa}\n",
        f"torch {h.torch} ({h.cpu_capability}), torchao {h.torchao}; measured platform {r.platform.name} "
        f"({r.platform.date or r.platform.file})"
        + (f"; datasheet {r.datasheet.name}" if r.datasheet else "; no datasheet platform matches this host"),
    )
    parts: list[RenderableType] = [head]
    if r.shapes:
        t = _table("Per-shape kernels: measured vs the roofline ceiling of the measured host and of its datasheet "
                   "(Gops/s; sheet: the datasheet's attainable ceiling, then the share of its bound)",
                   ["GEMM (M x N x K)", "precision", "kernel", "rel err", "measured", "ceiling", "%", "sheet", "% ",
                    "of bound"], left=("GEMM (M x N x K)", "precision", "kernel"))
        last = None
        for s in r.shapes:
            label = f"{s.name} {s.m}x{s.n}x{s.k}" if s.name != last else ""
            last = s.name
            t.add_row(label, s.precision, short_kernel(s.kernel),
                      _f(s.max_rel_error, lambda v: f"{v:.1e}") + ("" if s.numerics_ok else " !"),
                      _f(s.measured_ops_per_s, giga), giga(s.predicted_ops_per_s),
                      _f(s.achieved_fraction, lambda v: f"{100 * v:.0f}%") + (" !" if s.ceiling_violation else ""),
                      _f(s.predicted_datasheet_ops_per_s, giga),
                      _f(s.achieved_fraction_datasheet, lambda v: f"{100 * v:.0f}%"),
                      _f(s.achieved_fraction_datasheet_bound, lambda v: f"{100 * v:.0f}%"))
        parts.append(t)
    if r.decode:
        d0 = r.decode[0]
        t = _table(f"Decode-shaped GEMMs ({d0.name}, N x K = {d0.n} x {d0.k}), weights streamed from DRAM: achieved "
                   "GB/s of weights, as a share of the probed DRAM bandwidth and of the roofline ceiling",
                   ["precision", "M", "copies", "kernel", "rel err", "weights MB", "GB/s", "of DRAM", "of ceiling"],
                   left=("precision", "kernel"))
        for d in r.decode:
            t.add_row(d.precision, str(d.m), str(d.copies), short_kernel(d.kernel),
                      _f(d.max_rel_error, lambda v: f"{v:.1e}") + ("" if d.numerics_ok else " !"),
                      sig(d.weight_bytes / 1e6), _f(d.achieved_bytes_per_s, giga),
                      _f(d.bandwidth_fraction, lambda v: f"{100 * v:.0f}%"),
                      _f(d.achieved_fraction, lambda v: f"{100 * v:.0f}%") + (" !" if d.ceiling_violation else ""))
        parts.append(t)
    if r.encoder:
        t = _table("Encoder, compiled (per forward; profiler self time split; ceiling: the roofline's forward)",
                   ["precision", "kernel", "rel err", "latency ms", "ceiling ms", "req/s", "linear ms", "attention ms",
                    "other ms"], left=("precision", "kernel"))
        for e in r.encoder:
            t.add_row(e.precision, short_kernel(e.kernel), _f(e.max_rel_error, lambda v: f"{v:.1e}") + ("" if e.numerics_ok else " !"),
                      _f(e.latency_s, ms), _f(e.ceiling_s, ms) + (" !" if e.ceiling_violation else ""),
                      _f(e.throughput_rps, sig), _f(e.linear_block_s, ms), _f(e.attention_s, ms), _f(e.other_s, ms))
        parts.append(t)
    if r.end_to_end:
        t = _table("Realized vs ceiling (the paper's Table 14): throughput and linear block",
                   ["precision", "vs", "f_GEMM", "s_non", "s_GEMM", "ceiling", "realized", "%", "linear", "% "],
                   left=("precision", "vs"))
        for e in r.end_to_end:
            t.add_row(e.precision, e.baseline, _f(e.f_gemm, lambda v: f"{v:.3f}"), _f(e.non_gemm_speedup),
                      _f(e.predicted_gemm_speedup), _f(e.ceiling), _f(e.realized_speedup),
                      _f(e.fraction_of_ceiling, lambda v: f"{100 * v:.0f}%") + (" !" if e.ceiling_violation else ""),
                      _f(e.linear_block_speedup),
                      _f(e.linear_fraction_of_gemm_ceiling, lambda v: f"{100 * v:.0f}%"))
        t.caption = ("f_GEMM, s_non: measured (baseline's linear-block share; non-GEMM time ratio); s_GEMM: the "
                     "roofline GEMM speedup on the measured host; ceiling = 1/(f/s_GEMM + (1-f)/s_non); realized: "
                     "throughput ratio; linear: linear-block speedup, % of s_GEMM")
        t.caption_justify = "left"
        parts.append(t)
    violation = violation_line(r)
    if violation:
        parts.append(Text(violation, style="bold red"))
    c = r.contention
    if c is not None:
        parts.append(Text(contention_line(r), style="yellow" if c.unresolved else "dim"))
    flags = [(f"{s.name} {s.precision}", f) for s in r.shapes for f in s.flags]
    flags += [(f"decode {d.precision} M={d.m}", f) for d in r.decode for f in d.flags]
    flags += [(f"encoder {e.precision}", f) for e in r.encoder for f in e.flags]
    if flags or r.notes:
        text = Text()
        for where, f in flags:
            text.append(f"{where}: {f}\n", style="yellow" if not f.startswith("note") else "")
        for n in r.notes:
            text.append(f"{n}\n")
        tol = ", ".join(f"{k} {v:g}" for k, v in r.tolerances.items())
        text.append(f"numerics tolerances (relative error vs float64): {tol}")
        parts.append(text)
    return Group(*parts)
