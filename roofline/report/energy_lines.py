"""The energy figures as the terminal reports print them: one line of an estimate, a column and a note of a plan."""

from __future__ import annotations

from roofline.report.fmt import sig
from roofline.results.energy import PlanEnergy
from roofline.results.estimate import EstimateResult
from roofline.results.plan import CpuPlan


def estimate_line(r: EstimateResult) -> str:
    """``energy at 2 x 350 W TDP = 700 W, full load assumed, J/seq at the attainable ceiling / realistic: fp32
    7.91 / 10.9; ...`` (or why there is none)."""
    e = r.energy
    if e is None:
        return ""
    if e.power.watts is None:
        return f"energy: {e.power.note}"
    unit = "J/tok" if r.workload.phase == "decode" else "J/seq"
    figures = "; ".join(f"{f.precision} {sig(f.joules)} / {sig(f.realistic_joules)}" for f in e.figures)
    return f"energy at {e.power.note}, {unit} at the {r.ceiling} ceiling / realistic: {figures}"


def plan_joules(c: CpuPlan, decode: bool) -> str:
    """The summary's J/req (J/tok) cell: ``-`` without a figure."""
    e = c.energy
    j = None if e is None else (e.joules_per_token if decode else e.joules_per_request)
    return "-" if j is None else sig(j)


def plan_note(c: CpuPlan, decode: bool) -> str:
    """``spr: 2 x 350 W TDP = 700 W, full load assumed: 0.517 J per request; at 0.2/kWh 0.0287 per million
    requests, included in $/M req`` (or: no power figure, and the cost per million without energy)."""
    e: PlanEnergy | None = c.energy
    if e is None:
        return ""
    if e.power.watts is None:
        unpriced = ", so the cost per million leaves energy out" if e.price_per_kwh is not None else ""
        return f"{c.cpu}: {e.power.note}{unpriced}"
    j = e.joules_per_token if decode else e.joules_per_request
    if j is None:
        return f"{c.cpu}: {e.power.note}: no rate, no energy figure"
    what = "output token" if decode else "request"
    line = f"{c.cpu}: {e.power.note}: {sig(j)} J per {what}"
    if decode and e.joules_per_request is not None:
        line += f" ({sig(e.joules_per_request)} J per request)"
    cost = e.energy_cost_per_million_tokens if decode else e.energy_cost_per_million_requests
    if cost is not None:
        column = "$/M tok" if decode else "$/M req"
        line += (f"; at {e.price_per_kwh:g}/kWh {sig(cost)} per million {what}s, "
                 + (f"included in {column}" if c.price_per_hour is not None else
                    f"all of {column} (no --price-per-hour)"))
    return line


def shows_energy(r) -> bool:
    """A plan prints its energy (a J column, a note per CPU) when some CPU has a power figure or a price per kWh
    was given."""
    return any(c.energy is not None and (c.energy.power.watts is not None or c.energy.price_per_kwh is not None)
               for c in r.cpus)
