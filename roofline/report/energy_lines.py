"""The energy figures as the terminal reports print them: one line of an estimate, a column and a note of a plan."""

from __future__ import annotations

from roofline.report.fmt import sig
from roofline.results.energy import PlanEnergy, PowerDraw
from roofline.results.estimate import EstimateResult
from roofline.results.plan import CpuPlan


def _power(p: PowerDraw) -> str:
    """``2 x 350 W TDP = 700 W per server at full load (assumed; TDP: datasheet)``."""
    tdp = next((i for i in p.inputs if i.what == "power.tdp_w"), None)
    return p.note[:-1] + f"; TDP: {tdp.kind})" if tdp is not None and p.note.endswith(")") else p.note


def estimate_line(r: EstimateResult) -> str:
    """``energy: 2 x 350 W TDP = 700 W ... : fp32 7.91 J/seq at the ceiling, 10.9 realistic; ...`` (or why none)."""
    e = r.energy
    if e is None:
        return ""
    if e.power.watts is None:
        return f"energy: {e.power.note}"
    unit = "J/tok" if r.workload.phase == "decode" else "J/seq"
    figures = "; ".join(f"{f.precision} {sig(f.joules)} {unit} at the {r.ceiling} ceiling, {sig(f.realistic_joules)} "
                        "realistic" for f in e.figures)
    return f"energy at {_power(e.power)}: {figures} (inputs below, --json: energy)"


def plan_joules(c: CpuPlan, decode: bool) -> str:
    """The summary's J/req (J/tok) cell: ``-`` without a figure."""
    e = c.energy
    j = None if e is None else (e.joules_per_token if decode else e.joules_per_request)
    return "-" if j is None else sig(j)


def plan_note(c: CpuPlan, decode: bool) -> str:
    """``spr: energy at 2 x 350 W TDP = 700 W ...: 0.517 J per request; at 0.2 per kWh 0.0287 per million,
    in $/M req`` (or: no power figure, the cost per million without energy)."""
    e: PlanEnergy | None = c.energy
    if e is None:
        return ""
    if e.power.watts is None:
        unpriced = ", so the cost per million leaves energy out" if e.price_per_kwh is not None else ""
        return f"{c.cpu}: energy: {e.power.note}{unpriced}"
    j = e.joules_per_token if decode else e.joules_per_request
    if j is None:
        return f"{c.cpu}: energy at {_power(e.power)}: no rate, no figure"
    what = "output token" if decode else "request"
    line = f"{c.cpu}: energy at {_power(e.power)}: {sig(j)} J per {what}"
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
