"""The energy figures of estimate, plan and sweep: a busy server's power from its platform file's ``[power]``
table (:mod:`roofline.spec.power`), over the rate each command computes (:mod:`roofline.calc.energy`)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Literal

from roofline.calc.energy import energy_cost_per_million, joules_per_unit, server_power_w
from roofline.results.energy import EnergyFigure, EstimateEnergy, PlanEnergy, PowerDraw
from roofline.results.estimate import EstimateResult
from roofline.results.provenance import Provenance
from roofline.spec.platform import Platform

if TYPE_CHECKING:
    from roofline.results.plan import CpuPlan, PlanResult

#: why a busy server is priced at its TDP
FULL_LOAD = ("every core busy at the all-core clock the ceiling assumes, a load the TDP bounds; idle time, DRAM, fans "
             "and power-supply losses not counted (--server-overhead-w adds a server's)")


def tdp_w(platform: Platform) -> float | None:
    """The platform file's TDP per socket (W), or None."""
    p = platform.power
    return p.tdp_w.value if p is not None and p.tdp_w.known else None


def no_power_reason(platform: Platform) -> str:
    """Why a platform has no power figure, in one phrase."""
    if platform.power is None:
        return f"{platform.name}'s platform file has no [power] table"
    return f"{platform.name}'s power.tdp_w is unknown ({platform.power.tdp_w.unknown})"


def power_draw(platform: Platform, sockets: int, overhead_w: float = 0.0) -> PowerDraw:
    """A busy server of ``sockets`` of the platform's sockets: ``sockets x tdp_w + overhead_w``, with its inputs."""
    tdp = tdp_w(platform)
    overhead = Provenance("server overhead", f"{overhead_w:g} W", "assumed",
                          "--server-overhead-w" if overhead_w else "default 0: the sockets only")
    if tdp is None:
        return PowerDraw(watts=None, sockets=sockets, tdp_w=None, overhead_w=overhead_w, inputs=[overhead],
                         note=f"no power figure: {no_power_reason(platform)}")
    watts = server_power_w(sockets, tdp, overhead_w)
    assert platform.power is not None  # a TDP comes from the power table
    s = platform.power.tdp_w
    inputs = [Provenance("power.tdp_w", f"{tdp:g} W per socket", s.kind or "", s.source or ""),
              Provenance("server power", f"{sockets} x {tdp:g} W + {overhead_w:g} W = {watts:g} W", "assumed",
                         FULL_LOAD), overhead]
    return PowerDraw(watts=watts, sockets=sockets, tdp_w=tdp, overhead_w=overhead_w, inputs=inputs,
                     note=f"{sockets} x {tdp:g} W TDP" + (f" + {overhead_w:g} W" if overhead_w else "")
                     + f" = {watts:g} W, full load assumed")


def estimate_energy(r: EstimateResult, platform: Platform, overhead_w: float = 0.0) -> EstimateResult:
    """``r`` with its energy figures: joules per sequence (per token for decode) of each precision at the ceiling
    and realistic, and the power's inputs among the estimate's."""
    power = power_draw(platform, r.platform.sockets_used, overhead_w)
    unit: Literal["sequence", "token"] = "token" if r.workload.phase == "decode" else "sequence"
    figures = [] if power.watts is None else [
        EnergyFigure(name, unit, joules_per_unit(power.watts, pr.throughput_per_s),
                     joules_per_unit(power.watts, pr.realistic_throughput_per_s))
        for name, pr in r.precisions.items() if pr.throughput_per_s > 0 and pr.realistic_throughput_per_s > 0]
    inputs = [*r.inputs, *(i for i in power.inputs if i.what != "server overhead" or overhead_w)]
    return dataclasses.replace(r, energy=EstimateEnergy(power=power, figures=figures), inputs=inputs)


def plan_energy(c: CpuPlan, platform: Platform, *, utilization: float, overhead_w: float = 0.0,
                price_per_kwh: float | None = None) -> CpuPlan:
    """A :class:`~roofline.results.plan.CpuPlan` with its best layout's energy: joules per request (and output
    token) at ``rps_per_server x utilization``, and their cost at ``price_per_kwh`` added to the cost per million
    (the hourly price's share, when one is given)."""
    power = power_draw(platform, c.sockets, overhead_w)
    b = c.best
    rps = b.rps_per_server * utilization if c.meets else 0.0
    tps = (b.tokens_per_s_per_server or 0.0) * utilization if c.meets else 0.0
    j_req = joules_per_unit(power.watts, rps) if power.watts is not None and rps > 0 else None
    j_tok = joules_per_unit(power.watts, tps) if power.watts is not None and tps > 0 else None
    def cost(j: float | None) -> float | None:
        return None if j is None or price_per_kwh is None else energy_cost_per_million(j, price_per_kwh)
    e_req, e_tok = cost(j_req), cost(j_tok)
    def add(hourly: float | None, energy: float | None) -> float | None:
        return energy if hourly is None else hourly if energy is None else hourly + energy
    decoder = b.tokens_per_s_per_server is not None
    energy = PlanEnergy(power=power, joules_per_request=j_req, joules_per_token=j_tok, price_per_kwh=price_per_kwh,
                        energy_cost_per_million_requests=e_req, energy_cost_per_million_tokens=e_tok)
    return dataclasses.replace(
        c, energy=energy, cost_per_million_requests=add(c.cost_per_million_requests, e_req),
        cost_per_million_tokens=add(c.cost_per_million_tokens, e_tok) if decoder else c.cost_per_million_tokens)


def plan_with_energy(r: PlanResult, platforms: list[Platform], *, overhead_w: float = 0.0,
                     price_per_kwh: float | None = None) -> PlanResult:
    """A :class:`~roofline.results.plan.PlanResult` with each CPU's :func:`plan_energy` (``platforms`` in the
    order of its CPUs)."""
    cpus = [plan_energy(c, p, utilization=r.utilization, overhead_w=overhead_w, price_per_kwh=price_per_kwh)
            for c, p in zip(r.cpus, platforms, strict=True)]
    return dataclasses.replace(r, cpus=cpus)
