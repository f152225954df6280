"""Rich rendering of `check` (the paper's Table 14 with the gap attributed) and of a calibration."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from roofline.report.fmt import ms, realistic_basis, sig
from roofline.report.style import document, grid, section, table
from roofline.results.check import CheckResult
from roofline.spec.calibration import Calibration


def _table(title: str, cols: list[str], left: tuple[str, ...], notes=(), wrap: tuple[str, ...] = ("how",)
           ) -> tuple[Table, Group]:
    t = table(cols, left=left, wrap=wrap)
    return t, section(title, t, notes)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _rate(x: float, unit: str) -> str:
    return f"{sig(x)} {'tok/s' if unit == 'tokens/s' else '/s'}"


def rates_headline(r: CheckResult) -> list[RenderableType]:
    """One row per measured rate: measured, the ceiling and the realistic estimate, and what bounds the ceiling."""
    g = grid(["rate", "precision", "measured", "ceiling", "of ceiling", "realistic", "of realistic", "bound"],
             left=("rate", "precision", "bound"))
    for x in r.rates:
        g.add_row(x.what, x.precision, Text(_rate(x.measured, x.unit), style="bold"), _rate(x.ceiling, x.unit),
                  _pct(x.fraction_of_ceiling), _rate(x.realistic, x.unit), _pct(x.fraction_of_realistic), x.bound)
    return [g]


def above_bound_lines(r: CheckResult) -> list[RenderableType]:
    """One line per measured rate above the bound, saying so before anything else: the measurement (or its
    description) is what is first suspected, not the model."""
    out: list[RenderableType] = []
    for x in r.rates:
        if x.suspect and x.upper_bound:
            out.append(Text(f"! {x.what} {x.precision}: the measured {_rate(x.measured, x.unit)} is above the bound "
                            f"({_rate(x.upper_bound, x.unit)}; measured {_pct(x.fraction_of_upper_bound)} of it): "
                            f"{x.suspect}", style="bold red"))
    return out


def bound_notes(r: CheckResult) -> list[str]:
    """The bound of each rate (the highest clock the datasheet allows, the theoretical bandwidth), and the share of
    it measured."""
    rows = [f"{x.what} {x.precision} {_rate(x.upper_bound, x.unit)} ({_pct(x.fraction_of_upper_bound)}"
            + (", above it!)" if x.suspect else ")") for x in r.rates if x.upper_bound]
    return [f"bound (the highest clock the datasheet allows, theoretical bandwidth: no run may exceed it): "
            f"{'; '.join(rows)}"] if rows else []


def headline(r: CheckResult) -> list[RenderableType]:
    """The source, then one row per comparison: the measured end-to-end speedup against the ceiling and the
    realistic estimate (or per measured rate), then what the realistic estimate rests on. A rate above the bound
    leads, before all of it."""
    if r.rates:
        o = r.measured_from
        source = f"{o.path.rsplit('/', 1)[-1]} ({o.format})" if o is not None else r.source
        rated = {f"{x.precision} {x.what}": x.error_band for x in r.rates}
        return [*above_bound_lines(r), Text(f"check {r.model} on {r.cpu}: {source}", style="bold"), *rates_headline(r),
                Text(f"realistic: {realistic_basis(r.calibration, r.stack, r.realistic_accuracy, rated)}")]
    g = grid(["speedup", "measured", "ceiling", "of ceiling", "realistic", "of realistic"], left=("speedup",))
    violations: list[RenderableType] = []
    for c in r.comparisons:
        row = c.rows[0]
        g.add_row(f"{c.precision} vs {c.baseline}", Text(f"{row.measured:.2f}x", style="bold"), f"{row.ceiling:.2f}x",
                  _pct(row.fraction_of_ceiling) + (" !" if row.ceiling_violation else ""), f"{row.realistic:.2f}x",
                  _pct(row.fraction_of_realistic))
        if row.ceiling_violation:
            other = (f", or the {c.baseline} baseline ran further below its own" if r.source == "typed" else "")
            violations.append(Text(f"! {c.precision} vs {c.baseline} beats its ceiling: suspect {c.suspect_detail}{other}",
                                   style="bold red"))
    for lat in r.latency:
        if lat.ceiling_violation:
            violations.append(Text(f"! {lat.what} {lat.precision} ran faster than its ceiling "
                                   f"({ms(lat.measured_s)} < {ms(lat.ceiling_s)} ms): an error in the model; suspect "
                                   f"{lat.suspect_detail}", style="bold red"))
    basis = realistic_basis(r.calibration, r.stack, r.realistic_accuracy,
                            {c.precision: c.error_band for c in r.comparisons})
    return [Text(f"check {r.model} on {r.cpu}: {r.source}", style="bold"), g, *violations,
            Text(f"realistic: {basis}")]


def rate_sections(r: CheckResult) -> list[RenderableType]:
    """The measured rates in full, the terms of each, the inputs with their sources, what was left out."""
    out: list[RenderableType] = []
    layouts = sorted({f"{x.cores} cores in {x.instances} instance{'s' if x.instances > 1 else ''}" for x in r.rates})
    t, sec = _table(f"Measured rates against the ceiling and the realistic estimate (whole platform: "
                    f"{', '.join(layouts)})",
                    ["rate", "precision", "phase", "batch", "tokens", "measured", "spread", "ceiling", "%",
                     "realistic", "% "], left=("rate", "precision", "phase"),
                    notes=["tokens: the prompt (prefill), a sample (forward) or the tokens in the KV cache (decode); "
                           "spread: the measurement's standard deviation over its mean; %: the measured rate as a "
                           "share of the ceiling, and of the realistic estimate"] + bound_notes(r))
    for x in r.rates:
        tokens = x.context if x.phase == "decode" else x.seq_len
        t.add_row(x.what, x.precision, x.phase, str(x.batch), f"{tokens:,}", _rate(x.measured, x.unit),
                  "-" if x.spread is None else f"{100 * x.spread:.0f}%", _rate(x.ceiling, x.unit),
                  _pct(x.fraction_of_ceiling), _rate(x.realistic, x.unit), _pct(x.fraction_of_realistic))
    out.append(sec)
    names = list(dict.fromkeys(term.name for x in r.rates for term in x.terms if term.seconds))
    if names:
        t, sec = _table("Where the step time goes beyond the ceiling: the realistic terms, ms per step (whole platform)",
                        ["rate", "precision", "ceiling ms", *names, "unexplained ms"], left=("rate", "precision"))
        for x in r.rates:
            step = x.batch * (x.seq_len if x.phase == "prefill" else 1) / x.ceiling
            by = {term.name: term.seconds for term in x.terms}
            t.add_row(x.what, x.precision, ms(step), *(ms(by.get(n, 0.0)) for n in names), ms(x.unexplained * step))
        out.append(sec)
    if r.measured_from is not None:
        o = r.measured_from
        t = table(["input", "value", "source", "how"], left=("input", "value", "source", "how"), wrap=("value", "how"))
        for i in o.inputs:
            t.add_row(i.what, i.value, i.source, i.detail)
        out.append(section(f"Inputs and where each came from ({o.format}, {o.tool})", t,
                           ["source: the file states it, a flag gives it, or it is assumed (how: why)"]))
        if o.left_out:
            t = table(["what", "why"], left=("what", "why"), wrap=("what", "why"))
            sec = section("Left out of the comparison", t)
            for x in o.left_out:
                t.add_row(x.what, x.why)
            out.append(sec)
    return out


def render_check(r: CheckResult, brief: bool = False) -> RenderableType:
    sections: list[RenderableType] = []
    if r.rates:
        sections += rate_sections(r)
        if r.notes:
            sections.append(section("Notes", None, r.notes))
        return document(headline(r), sections, brief=brief)
    t, sec = _table("Measured against the ceilings (the paper's Table 14) and the realistic estimate",
                    ["speedup", "metric", "measured", "ceiling", "%", "realistic", "% "], left=("speedup", "metric"),
                    notes=["%: the measured speedup as a share of the ceiling, and of the realistic estimate" + (
                        "; !: above the ceiling (an error in the model: the notes name the input to suspect)"
                        if any(row.ceiling_violation for c in r.comparisons for row in c.rows) else "")])
    for c in r.comparisons:
        for row in c.rows:
            t.add_row(f"{c.precision} vs {c.baseline}", row.metric, f"{row.measured:.2f}x", f"{row.ceiling:.2f}x",
                      _pct(row.fraction_of_ceiling) + (" !" if row.ceiling_violation else ""), f"{row.realistic:.2f}x",
                      _pct(row.fraction_of_realistic))
    sections.append(sec)
    for c in r.comparisons:
        a, sec = _table(f"{c.precision} vs {c.baseline}: where the gap goes (f_GEMM {c.f_gemm:.3g}, s_GEMM "
                        f"{c.gemm_speedup:.3g}, s_non {c.non_gemm_speedup:.3g}; baseline {ms(c.baseline_time_s)} ms)",
                        ["term", "ms", "of baseline", "of the gap", "how"], left=("term", "how"))
        for term in c.terms:
            a.add_row(term.name, ms(term.seconds), _pct(term.share_of_baseline), _pct(term.share_of_gap), term.how)
        a.add_row(Text("unexplained", style="bold"), ms(c.unexplained * c.baseline_time_s), _pct(c.unexplained),
                  _pct(1 - c.explained_gap) if c.explained_gap or c.unexplained else "-", "what the terms leave")
        sections.append(sec)
    if r.latency:
        lt, sec = _table("Time per call: measured against the attainable ceiling and the bound, and the realistic "
                         "estimate (ceiling + terms)",
                         ["what", "precision", "measured", "attainable", "share", "of bound", "realistic",
                          "error"], left=("what", "precision"), wrap=("what", "precision"),
                         notes=["ms; share, of bound: the share of the attainable ceiling and of the bound the run reached"
                                + ("; !: faster than the bound (the notes name the input to suspect)"
                                   if any(row.ceiling_violation for row in r.latency) else "")])
        for row in r.latency:
            lt.add_row(row.what, row.precision, ms(row.measured_s), ms(row.ceiling_s), _pct(row.of_attainable),
                       _pct(row.of_bound) + (" !" if row.ceiling_violation else ""),
                       ms(row.realistic_s), f"{100 * row.realistic_error:+.0f}%")
        sections.append(sec)
    if r.notes:
        sections.append(section("Notes", None, r.notes))
    return document(headline(r), sections, brief=brief)


def render_calibration(c: Calibration) -> RenderableType:
    t = table(["what", "value", "how"], left=("what", "how"), wrap=("how",))
    how = lambda v: (v.source or "").split("; fitted from")[0]  # noqa: E731
    for k, v in c.gemm_efficiency.items():
        t.add_row(f"GEMM efficiency in the model, {k}", f"{v.value:.3g}", how(v))
    for k, v in c.kernel_efficiency.items():
        t.add_row(f"GEMM kernel efficiency alone, {k}", f"{v.value:.3g}", how(v))
    for k, v in c.kernel_quantization_efficiency.items():
        t.add_row(f"quantization efficiency alone, {k}", f"{v.value:.3g}", how(v))
    for k, v in c.non_gemm_efficiency.items():
        t.add_row(f"non-GEMM efficiency, {k}", f"{v.value:.3g}", how(v))
    for name, label, scale, unit in (("quantization_efficiency", "quantization efficiency in the model", 1, ""),
                                     ("call_s", "graph call", 1e6, " us"), ("per_op_s", "per extern op", 1e6, " us")):
        v = getattr(c, name)
        if v is not None:
            t.add_row(label, f"{v.value * scale:.3g}{unit}", how(v))
    first = next(iter(c.gemm_efficiency.values()))
    return section(f"Calibration of {c.platform}", t, ["fitted from" + (first.source or "").split("; fitted from")[-1]])
