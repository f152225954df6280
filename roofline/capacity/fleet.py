"""Choosing a CPU's best layout and sizing the fleet, for both kinds of plan.

- **Best layout**: the most requests per second per server (offline: the capacity; server: the
  highest rate meeting the SLO). Layouts within 1% of the best tie (the simulation's search is that
  fine, and the roofline has no parallel-efficiency term): the smallest instance among them, which
  scales best in practice. When no layout meets the SLO, the one with the lowest latency alone is
  shown with rate 0, and the plan says that no layout meets it.
- **Servers**: ``ceil(target / (rps_per_server x utilization))``; **cost** per million requests:
  ``price_per_hour / (rps_per_server x utilization x 3600) x 1e6`` (per million output tokens for
  decoders, with tokens/s in place of requests/s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from roofline.model.step import BOUNDS
from roofline.results.plan import CpuPlan
from roofline.spec.vocab import Scenario

#: layouts whose rate is within this fraction of the best count as a tie
TIE = 0.01
#: offered loads of the latency-vs-load curve, as fractions of the best layout's offline capacity
CURVE_LOADS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)


@dataclass(frozen=True)
class Choice:
    index: int
    """position of the chosen layout"""
    meets: bool
    reason: str


def choose(rates: np.ndarray, cores: np.ndarray, usable: np.ndarray, alone_s: np.ndarray, what: str) -> Choice:
    """The best of one CPU's layouts: ``rates`` per layout, ``usable`` those meeting the scenario's
    constraints, ``alone_s`` a lone request's latency (the fallback's key); ``what`` names the constraint
    for the reason ('' offline)."""
    rates = np.where(usable, rates, -np.inf)
    if not np.any(usable & (rates > 0)):
        i = int(np.argmin(alone_s))
        return Choice(i, False, f"no layout meets {what}: the fastest alone is shown")
    top = float(np.max(rates))
    tied = np.flatnonzero(rates >= (1 - TIE) * top)
    i = int(tied[np.argmin(cores[tied])])
    reason = "most requests per second per server" + (f" among the layouts meeting {what}" if what else "")
    if tied.size > 1:
        reason += (f"; {tied.size} layouts tie within {TIE:.0%}: the smallest instance, which scales best in "
                   "practice")
    return Choice(i, True, reason)


def layout_fields(scenario: Scenario, cores: float, per_socket: float, per_server: float, split: np.ndarray) -> dict:
    """The fields every layout's result has: which layout it is, and what bounds its ceiling step
    (``split``: that step's seconds by bound, compute, L2, LLC, DRAM)."""
    return dict(scenario=scenario.value, instance_cores=int(cores), cores_per_instance=int(cores),
                instances_per_socket=int(per_socket), instances_per_server=int(per_server),
                bound=BOUNDS[int(np.argmax(split))].value,
                time_split={BOUNDS[b].value: float(v) for b, v in enumerate(split) if v > 0})


def servers_needed(target_rps: float | None, rps_per_server: float, utilization: float) -> int | None:
    if not target_rps or not rps_per_server > 0:
        return None
    n = target_rps / (rps_per_server * utilization)
    return math.ceil(n) if math.isfinite(n) else None


def band_factors(band: float | np.ndarray) -> tuple:
    """The service-time factors at the error band's two ends: ``1 + band`` times longer, then shorter (one pair,
    or a pair of arrays for an array of bands)."""
    return 1 + band, 1 / (1 + band)


def with_band(c: CpuPlan, ends, o, band: float) -> CpuPlan:
    """``c`` with its error ``band``, its best layout's rate at the band's two ends (``ends``: with the service times
    longer, then shorter) and the servers ``o.target_rps`` needs at them, fewest first (None where no rate meets the
    SLO)."""
    if not c.meets:
        return replace(c, service_band=band)
    slower, faster = float(ends[0]), float(ends[1])
    best = replace(c.best, rps_per_server_band=[slower, faster])
    servers = ([servers_needed(o.target_rps, faster, o.utilization), servers_needed(o.target_rps, slower, o.utilization)]
               if o.target_rps else None)
    return replace(c, best=best, layouts=[best if x is c.best else x for x in c.layouts], servers_needed_band=servers,
                   service_band=band)


def cost_per_million(price_per_hour: float | None, per_s: float, utilization: float) -> float | None:
    """Dollars per million of what ``per_s`` counts (requests, tokens) at the planned utilization."""
    if price_per_hour is None or not per_s > 0:
        return None
    c = price_per_hour / (per_s * utilization * 3600) * 1e6
    return c if math.isfinite(c) else None


def curve_loads(found: float) -> np.ndarray:
    """The curve's loads (fractions of the capacity), with the server scenario's answer among them."""
    loads = set(CURVE_LOADS)
    if 0 < found < 1:
        loads.add(round(float(found), 6))
    return np.array(sorted(loads))


def num(x) -> float | None:
    """A float for JSON, None where the simulation has no value (NaN)."""
    v = float(x)
    return v if math.isfinite(v) else None


def interval(pair) -> list[float] | None:
    lo, hi = (float(v) for v in pair)
    return [lo, hi] if math.isfinite(lo) and math.isfinite(hi) else None
