"""The rendering of ``roofline accuracy``: a headline of the per-stack and per-group errors (plain
data, for ``--brief``), then the stacks by phase, the plans' server/offline ratios, every figure and
the excluded records."""

from __future__ import annotations

import statistics
from collections import Counter

from rich.console import RenderableType
from rich.text import Text

from roofline.report.fmt import sig
from roofline.report.headline import Grid, Item, Line, to_rich
from roofline.report.listing import WORST_LISTED
from roofline.report.style import document, section, table
from roofline.results.accuracy import AccuracyResult, AccuracyRow


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.0f}%"


def _loo(a, x: float) -> str:
    """A leave-one-platform-out error of ``a``: '-' where no figure was scored (a median of none is not 0%)."""
    return "-" if a.figures == 0 else _share(x)


def _share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _ms(x: float | None) -> str:
    return "-" if x is None else sig(x * 1e3)


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


def _figure(row: AccuracyRow) -> str:
    """A figure as the tables name it: its GEMM's or test's label (else its kind), precision and baseline."""
    what = row.what if row.kind in ("gemm", "tokens_per_s") else row.kind.replace("_", " ")
    return f"{what} {row.precision}" + (f" vs {row.baseline}" if row.baseline else "")


def headline(r: AccuracyResult) -> list[Item]:
    """The counts, then one row per stack and per group: leave-one-platform-out |error| median and worst, the
    figures and platforms it is over, the median tightness."""
    t = r.tightness
    out: list[Item] = [Line(
        f"{r.records} records on {r.platforms} platforms ({len(r.excluded)} more kept, not scored), {r.figures} "
        f"figures: {r.violations} above the bound; median tightness {_share(t.median if t else None)} of the "
        "attainable ceiling", "bold")]
    g = Grid(["stack / group", "figures", "CPUs", "LOO median", "worst", "in band", "tightness"],
             left=("stack / group",))
    for s in r.stacks:
        tight = _share(s.tightness.median) if s.tightness else "-"
        if s.accuracy is None:
            g.add_row(s.stack, str(s.tightness.n if s.tightness else 0), "", "ceilings only", "", "", tight)
            continue
        a = s.accuracy
        g.add_row(s.stack, str(a.figures), str(a.platforms), _loo(a, a.median_abs_error), _loo(a, a.worst_abs_error),
                  _share(s.coverage), tight)
    for grp in r.groups:
        a = grp.accuracy
        g.add_row(Line(grp.name, "bold"), str(a.figures), str(a.platforms), Line(_loo(a, a.median_abs_error), "bold"),
                  _loo(a, a.worst_abs_error), _share(grp.coverage), "")
    out.append(g)
    out.append(Line("in band: the share of figures within the median |error| of their stack's other platforms, the "
                    "band quoted for an unseen CPU (half, where it is honest)"))
    if r.plans:
        errs = sorted(abs(p.error) for p in r.plans)
        banded = [p for p in r.plans if p.within_band is not None]
        inside = f"; {sum(p.within_band for p in banded)} in its range" if banded else ""
        out.append(Line(f"plan server/offline ratio vs MLPerf's, {len(r.plans)} Server runs: |error| median "
                        f"{_share(errs[len(errs) // 2])}, worst {_share(errs[-1])}{inside}"))
        lat = {q: e for q in (50, 99)
               if (e := sorted(abs(x) for p in r.plans if (x := getattr(p, f"p{q}_error")) is not None))}
        if lat:
            def each(f) -> str:
                return " / ".join(_share(f(e)) for e in lat.values())
            n = max(len(e) for e in lat.values())
            out.append(Line(f"plan {' / '.join(f'p{q}' for q in lat)} latency at {n} Server runs' rates vs loadgen: "
                            f"|error| median {each(statistics.median)}, worst {each(lambda e: e[-1])}"))
    for what, d in (("LLM plan vs MLPerf", [x for x in r.decoder_runs if x.scenario != "concurrency"]),
                    ("LLM plan vs concurrency sweeps", [x for x in r.decoder_runs if x.scenario == "concurrency"])):
        if not d:
            continue
        errs = [abs(x.error) for x in d]
        unit = "rate" if d[0].unit == "requests/s" else "tok/s"
        out.append(Line(f"{what}, {len(d)} runs: {unit} |error| median {_share(statistics.median(errs))}, "
                        f"worst {_share(max(errs))}, {sum(x.violation for x in d)} above its ceiling"))
        kinds, n = [], 0
        for kind in ("ttft", "tpot"):
            parts = []
            for stat in ("mean", "p99"):
                e = [abs(x.error) for run in d for x in run.latencies if x.kind == kind and x.statistic == stat]
                if e:
                    parts.append(f"{_share(statistics.median(e))} {stat}")
                    n = max(n, len(e))
            if parts:
                kinds.append(f"{kind.upper()} {', '.join(parts)}")
        if kinds:
            at = "rate" if d[0].scenario != "concurrency" else "users"
            out.append(Line(f"  at each run's {at} ({n} runs), |error| median {'; '.join(kinds)}"))
    return out


def summary_lines(r: AccuracyResult) -> list[str]:
    """The headline as text lines (one per grid row)."""
    from roofline.report.headline import plain_text

    return (plain_text(headline(r), 10_000) or "").splitlines()


def furthest(r: AccuracyResult, n: int) -> list[AccuracyRow]:
    """The ``n`` scored figures whose leave-one-platform-out prediction is furthest off (largest ``|error|``; ties
    in the result's order), of those the headline's errors count (not suspect, not unstable)."""
    scored = [x for x in r.rows if x.realistic_error is not None and not x.unstable and not x.suspect]
    return sorted(scored, key=lambda x: -abs(x.realistic_error))[:n]


def furthest_off(r: AccuracyResult, n: int) -> RenderableType:
    """:func:`furthest` as a table, with the class their GEMMs run on and the error of the profile fitted with their
    platform (in sample): a figure off in sample too is one the model cannot fit, one off only when left out is one
    the other platforms do not predict."""
    rows = furthest(r, n)
    t = table(["#", "stack", "platform", "figure (its class)", "measured", "predicted", "error", "in sample"],
              left=("stack", "platform", "figure (its class)"), wrap=("figure (its class)",))
    for i, row in enumerate(rows, 1):
        figure = _figure(row)
        t.add_row(str(i), row.stack, row.platform, f"{figure} ({row.path_class or '-'})",
                  _value(row.kind, row.measured), _value(row.kind, row.realistic), _pct(row.realistic_error),
                  _pct(row.in_sample_error))
    return section(f"Furthest off: the {len(rows)} figures with the largest leave-one-platform-out |error|", t,
                   ["error: predicted / measured - 1 by the stack's profile fitted without the figure's platform; "
                    "in sample: by the profile fitted on every platform; #: the record",
                    *(f"{i}: {row.record}" for i, row in enumerate(rows, 1))])


def render_accuracy(r: AccuracyResult, brief: bool = False, worst: int | None = None) -> RenderableType:
    """The headline, then the sections (``brief``: none); ``worst``: the figures furthest off listed after the
    headline (brief or not; default :data:`~roofline.report.listing.WORST_LISTED` in the full output, none in
    the brief one)."""
    if brief:
        head = [*to_rich(headline(r))] + ([Text(""), furthest_off(r, worst)] if worst else [])
        return document(head, brief=True)
    sections: list[RenderableType] = [furthest_off(r, worst or WORST_LISTED)]
    phases = table(["stack", "phase", "figures", "platforms", "LOO median", "worst"], left=("stack", "phase"))
    for s in r.stacks:
        for phase, a in s.per_phase.items():
            phases.add_row(s.stack, phase, str(a.figures), str(a.platforms), _loo(a, a.median_abs_error),
                           _loo(a, a.worst_abs_error))
    per = [f"{s.stack}: " + ", ".join(f"{p} {_share(e)}" for p, e in s.per_platform.items())
           for s in r.stacks if s.per_platform]
    per_class = [f"{s.stack}: " + ", ".join(f"{c} {_share(a.median_abs_error)} ({a.figures} on {a.platforms})"
                                            for c, a in s.accuracy.classes.items())
                 for s in r.stacks if s.accuracy is not None and s.accuracy.classes]
    sections.append(section("Leave-one-platform-out error by stack and phase", phases,
                            ["median |error| per platform:", *per,
                             "median |error| per compute path class (figures on platforms; an estimate on a class "
                             "quotes its median where wider than the stack's):", *per_class]))
    if r.plans:
        t = table(["server run", "platform", "bound ms", "measured", "plan", "range", "error"],
                  left=("server run", "platform"), wrap=("server run", "platform"))
        lat = table(["server run", "platform", "cores", "p50 ms", "plan p50", "p99 ms", "plan p99"],
                    left=("server run", "platform"), wrap=("server run", "platform"))
        for p in r.plans:
            span = f"{p.plan_ratio_band[0]:.2f}-{p.plan_ratio_band[1]:.2f}" if p.plan_ratio_band else "-"
            t.add_row(p.record, p.platform, f"{p.latency_bound_s * 1e3:g}", f"{p.measured_ratio:.3f}",
                      f"{p.plan_ratio:.3f}", span, _pct(p.error))
            lat.add_row(p.record, p.platform, f"{p.instance_cores}/{p.offline_instance_cores}", _ms(p.measured_p50_s),
                        _ms(p.plan_p50_s), _ms(p.measured_p99_s), _ms(p.plan_p99_s))
        sections.append(section("MLPerf Server over Offline: measured and planned (roofline plan, leave-one-"
                                "platform-out)", t, ["range: the plan's ratio with every service time longer and "
                                                     "shorter by the stack's band (the other platforms' median "
                                                     "|error|)"]))
        sections.append(section("MLPerf Server latency at the run's scheduled rate: loadgen's and the plan's "
                                "simulation of the run's layout", lat,
                                ["cores: per instance, Server / Offline (the plan's offline capacity is of the "
                                 "Offline run's layout)"]))
    if r.decoder_runs:
        t = table(["run", "platform", "scenario", "layout", "measured", "plan", "error", "ceiling"],
                  left=("run", "platform", "scenario", "layout"), wrap=("run", "platform", "scenario", "layout"))
        for x in r.decoder_runs:
            users = f", {x.concurrency} users" if x.concurrency else ""
            t.add_row(x.record, x.platform, x.scenario,
                      f"{x.instances} x {x.instance_cores}, {x.max_sequences} seqs{users}",
                      f"{x.measured:.3g}", f"{x.plan:.3g}", _pct(x.error),
                      Text(f"{x.ceiling:.3g}", style="bold red" if x.violation else ""))
        lat = table(["run", "platform", "TTFT mean", "plan", "TTFT p99", "plan", "TPOT mean", "plan", "TPOT p99",
                     "plan"], left=("run", "platform"), wrap=("run", "platform"))
        for x in r.decoder_runs:
            if not x.latencies:
                continue
            got = {(y.kind, y.statistic): y for y in x.latencies}
            cells = []
            for key in (("ttft", "mean"), ("ttft", "p99"), ("tpot", "mean"), ("tpot", "p99")):
                y = got.get(key)
                cells += [_ms(y.measured_s), _ms(y.plan_s)] if y else ["-", "-"]
            lat.add_row(x.record, x.platform, *cells)
        priced = ", ".join(sorted({x.priced_by for x in r.decoder_runs}))
        sections.append(section("Decoder serving runs: measured and planned (roofline plan, continuous batching, "
                                "leave-one-platform-out)", t,
                                ["measured: an MLPerf run's samples per second (Server: its scheduled rate), a "
                                 "concurrency run's output tokens per second; plan: the plan's offline rate of the "
                                 "run's layout, its server capacity under the run's p99 TTFT and TPOT bounds, or its "
                                 "concurrency scenario at the run's users; layout: instances per server x cores each, "
                                 "running sequences per instance at most",
                                 f"priced by: {priced} (the run's own stack, or its record's priced_by, which says "
                                 "why), refitted without the run's platform; ceiling: the same plan at the attainable "
                                 "ceiling's service times"]))
        if lat.row_count:
            sections.append(section("Decoder serving runs' TTFT and TPOT: the run's and the plan's (ms; MLPerf Server "
                                    "at the run's scheduled rate, a concurrency run at its users)", lat,
                                    ["Intel's MLPerf Server client groups arriving queries under a 1.8 s prefill-time "
                                     "budget before it sends them (SUT_sglang.py, time_left = 1.8): that wait is in "
                                     "loadgen's TTFT and not in the plan's; a concurrency run's plan gives one TTFT "
                                     "and one TPOT, set against the run's means"]))
    for stack in dict.fromkeys(row.stack for row in r.rows):
        t = table(["record", "platform", "figure", "measured", "attainable", "tight", "realistic", "error"],
                  left=("record", "platform", "figure"), wrap=("record", "platform", "figure"))
        for row in (x for x in r.rows if x.stack == stack):
            figure = f"{row.phase} {_figure(row)}"
            t.add_row(row.record, row.platform, figure, _value(row.kind, row.measured),
                      Text(_value(row.kind, row.ceiling), style="bold red" if row.violation else ""),
                      Text(_share(row.tightness), style="yellow" if row.suspect else ""),
                      "-" if row.realistic is None else _value(row.kind, row.realistic),
                      Text("unstable", style="dim") if row.unstable else _pct(row.realistic_error))
        sections.append(section(f"Stack {stack}: every figure", t))
    sections.append(section("Notes", None, ["error: predicted / measured - 1; tight: measured performance over the "
                                            "attainable ceiling's (yellow: above twice it, suspect); red: above the bound; "
                                            "unstable: the source's runs of it disagree, not scored",
                                            *r.notes]))
    if r.excluded:
        reasons = Counter(e.reason for e in r.excluded)
        t = table(["records", "why not scored"], left=("why not scored",), wrap=("why not scored",))
        for reason, n in reasons.most_common():
            t.add_row(str(n), reason)
        sections.append(section(f"Kept, not scored: {len(r.excluded)} records (the model cannot price the run)", t))
    return document(to_rich(headline(r)), sections, brief=brief)
