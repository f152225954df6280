"""Result types of the energy figures of ``estimate``, ``plan`` (and the power a ``sweep`` column is priced at).

A busy server is assumed to draw ``sockets x tdp_w + overhead_w`` (:mod:`roofline.calc.energy`); each figure
lists that power's inputs the way an estimate lists its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from roofline.results.provenance import Provenance
from roofline.spec import PYDANTIC_CONFIG


@dataclass(frozen=True)
class PowerDraw:
    """What one busy server draws, and from what."""

    __pydantic_config__ = PYDANTIC_CONFIG

    watts: float | None
    """sockets x tdp_w + overhead_w; null: no power figure (the platform file gives no TDP)"""
    sockets: int
    tdp_w: float | None
    """per socket, the platform file's power.tdp_w"""
    overhead_w: float
    """the rest of the server (DRAM, fans, power supply losses): --server-overhead-w, 0 by default"""
    inputs: list[Provenance] = field(default_factory=list)
    """the TDP with its source, the full-load assumption, the overhead"""
    note: str = ""
    """what the figure assumes, or why there is none"""


@dataclass(frozen=True)
class EnergyFigure:
    """One precision's energy per unit of work on the estimate's platform."""

    __pydantic_config__ = PYDANTIC_CONFIG

    precision: str
    unit: Literal["sequence", "token"]
    """token: a decode step's output token of one sequence; sequence: a forward pass or a prompt's prefill"""
    joules: float
    """power / throughput_per_s: at the result's ceiling (the attainable one unless --ceiling bound)"""
    realistic_joules: float
    """power / realistic_throughput_per_s"""


@dataclass(frozen=True)
class EstimateEnergy:
    """The estimate's energy figures: the server's power, and per precision joules per sequence or token."""

    __pydantic_config__ = PYDANTIC_CONFIG

    power: PowerDraw
    figures: list[EnergyFigure] = field(default_factory=list)
    """empty without a power figure"""


@dataclass(frozen=True)
class PlanEnergy:
    """A CPU's best layout: the server's power, joules per request (and output token), the energy's cost."""

    __pydantic_config__ = PYDANTIC_CONFIG

    power: PowerDraw
    joules_per_request: float | None = None
    """power / (rps_per_server x utilization); null: no power figure or no rate"""
    joules_per_token: float | None = None
    """decoders: power / (tokens_per_s_per_server x utilization)"""
    price_per_kwh: float | None = None
    energy_cost_per_million_requests: float | None = None
    """joules_per_request x 1e6 / 3.6e6 x price_per_kwh: included in cost_per_million_requests"""
    energy_cost_per_million_tokens: float | None = None
    """decoders: the same per million output tokens, included in cost_per_million_tokens"""
