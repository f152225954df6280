"""The headline of an :class:`EstimateResult` (``estimate --brief`` prints it alone, without rich)."""

from __future__ import annotations

from roofline.report.fmt import differs_by_class, ms, ratio, realistic_basis, sig
from roofline.report.headline import Grid, Item, Line
from roofline.results.estimate import EstimateResult


def workload_line(r: EstimateResult) -> str:
    w, p = r.workload, r.platform
    if w.phase == "decode":
        shape = f"decode, batch {w.batch}, context {w.context:,}"
    elif w.phase == "prefill":
        shape = f"prefill, batch {w.batch} x prompt {w.seq_len}"
    else:
        shape = f"batch {w.batch} x seq {w.seq_len}"
    layout = ""
    if p.layout is not None:
        n = p.layout.instances_per_socket * p.sockets_used
        t = p.layout.tensor_parallel
        where = f"{p.sockets_used} sockets" if p.sockets_used > 1 else "1 socket"
        layout = (f"; one instance of {p.layout.cores_per_instance} cores split over {t} tensor-parallel ranks on {where}"
                  if t > 1 else f"; one process over {p.sockets_used} sockets ({p.layout.cores_per_instance} cores)"
                  if p.layout.spans_sockets else f"; {n} instance{'s' if n > 1 else ''} of {p.layout.cores_per_instance} cores")
    return f"{w.model} on {p.name}: {shape}{layout}"


def bands(r: EstimateResult) -> dict:
    """each precision's error band (None without a profile's accuracy)"""
    return {name: p.error_band for name, p in r.precisions.items()}


def realistic_line(r: EstimateResult) -> str:
    """What the realistic figures are, and how far off they are expected to be (each precision's band in the
    ``+/-`` column where they differ)."""
    ceiling = "ceiling" if r.memory_model == "paper" else r.ceiling
    a = r.realistic_accuracy
    if r.calibration is None and differs_by_class(bands(r), a):
        whose = r.stack if a.band == a.median_abs_error else f"cross-stack: {r.stack} on {a.platforms} CPUs"
        return f"a / b: {ceiling} / realistic; +/-: median error on unseen CPUs by path class ({whose})"
    return f"a / b: {ceiling} / realistic ({realistic_basis(r.calibration, r.stack, a)})"



def headline(r: EstimateResult) -> list[Item]:
    """At most a context line, a header, one row per precision and a line on the realistic estimate: what
    bounds each precision, one instance's latency and the platform's throughput, the GEMM speedup and the
    end-to-end ceiling, ceiling and realistic side by side."""
    decode = r.workload.phase == "decode"
    latency, rate = ("ms/token", "tok/s") if decode else ("latency ms", "seq/s")
    banded = r.calibration is None and differs_by_class(bands(r), r.realistic_accuracy)
    by_stack = len({pr.stack for pr in r.precisions.values()}) > 1
    t = Grid(["precision", "bound", latency, rate, "GEMM", "end to end"] + (["+/-"] if banded else [])
             + (["stack"] if by_stack else []), left=("precision", "bound", "stack"))
    speedups = {s.precision: s for s in r.speedups}
    for name, pr in r.precisions.items():
        s = speedups.get(name)
        err = pr.error_band.realistic_error if pr.error_band is not None else None
        band = [] if not banded else ["" if pr.error_band is None else "none" if err is None else f"{err:.0%}"]
        t.add_row(name, pr.bound, f"{ms(pr.instance_latency_s)} / {ms(pr.realistic_instance_latency_s)}",
                  f"{sig(pr.throughput_per_s)} / {sig(pr.realistic_throughput_per_s)}",
                  ratio(s.gemm_speedup) if s else "",
                  Line(f"{ratio(s.end_to_end_ceiling)} / {ratio(s.realistic)}", "bold") if s else "", *band,
                  *([pr.stack or "-"] if by_stack else []))
    out: list[Item] = [Line(workload_line(r) + f"; baseline {r.baseline}", "bold"), t, Line(realistic_line(r))]
    if r.notes:
        out.append(Line("\n".join(f"note: {n}" for n in r.notes), "yellow"))
    return out
