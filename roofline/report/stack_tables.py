"""The rendering of ``roofline stacks``: the profiles, and one profile's values beside their fit ranges."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from roofline.report.fmt import sig
from roofline.report.style import document, section, table
from roofline.results.stacks import StackSummary, StackValues


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def stack_list(items: list[StackSummary], brief: bool = False) -> RenderableType:
    t = table(["name", "records", "figures", "CPUs", "LOO median", "fitted", "on a bound"], left=("name",))
    for s in items:
        t.add_row(s.name, str(s.records), "-" if s.figures is None else str(s.figures),
                  "-" if s.platforms is None else str(s.platforms), _pct(s.median_abs_error), str(s.fitted),
                  str(s.at_bound) if s.at_bound else "-")
    head = Text(f"{len(items)} stack profiles: {', '.join(s.name for s in items)}", style="bold")
    hint = Text("roofline stacks show NAME: every value, its range and whether the figures pinned it down")
    return document([head, hint], [section("Stack profiles (platforms/stacks)", t)], brief=brief)


def render_stack(v: StackValues, brief: bool = False) -> RenderableType:
    a = v.accuracy
    said = (f"leave-one-platform-out |error| median {_pct(a.median_abs_error)}, worst {_pct(a.worst_abs_error)}, "
            f"{a.figures} figures on {a.platforms} CPUs" if a and a.figures else "no measured accuracy"
            + (" (no figure scored leave-one-platform-out)" if a else ""))
    head = [Text.assemble((v.name, "bold"), f": {v.records} records; {said}"
                          + (f"; GGUF kernels from the {v.kernels} kernel table" if v.kernels else "")),
            Text("on a bound: " + (", ".join(v.at_bound) + " (the figures did not pin these down: read them as "
                                   "limits, not measurements)" if v.at_bound else "none"),
                 style="bold" if v.at_bound else "")]
    if v.form is not None:
        differ = "; ".join(f"{p}: {f}" for p, f in sorted((v.folds or {}).items()))
        head.append(Text(f"form: {v.form} (chosen by the CPUs' leave-one-out figures; each CPU's own fold chosen "
                         "without it" + (f", where it differs: {differ})" if differ else ": the same on every CPU)")))
    t = table(["value", "", "kind", "fit range", "bound", "figs", "CPUs"], left=("value", "kind", "bound"))
    for r in v.values:
        t.add_row(r.label, f"{sig(r.value)}{' ' + r.unit if r.unit else ''}", r.kind,
                  f"{sig(r.lower, 2)}-{sig(r.upper, 2)}", r.at_bound or "", "" if r.figures is None else str(r.figures),
                  "" if r.platforms is None else str(r.platforms))
    return document(head, [section("Values (the fit's range; figures and CPUs: a class's leave-one-platform-out "
                                   "figures)", t)], brief=brief)
