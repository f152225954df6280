"""Result type of ``roofline plan`` (SI units)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from roofline.spec import PYDANTIC_CONFIG

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class LayoutResult:
    """N instances of C cores on each socket, weights shared per socket."""

    __pydantic_config__ = PYDANTIC_CONFIG

    cores_per_instance: int
    instances_per_socket: int
    latency_s: float
    """roofline time of one request batch on one instance: GEMMs plus modelled non-GEMM work, no queueing"""
    instance_rps: float
    socket_rps: float
    server_rps: float
    bound: Literal["compute", "L2", "LLC", "DRAM"]
    """what bounds most of the request's time"""
    time_split: dict[str, float]
    """seconds per request batch by bound: compute, L2, LLC, DRAM"""
    meets_latency: bool | None
    """latency_s <= the target; null when no target was given"""


@dataclass(frozen=True)
class CpuPlan:
    __pydantic_config__ = PYDANTIC_CONFIG

    cpu: str
    description: str
    sockets: int
    cores_per_socket: int
    weights_llc_resident: bool
    layouts: list[LayoutResult]
    best: LayoutResult
    best_reason: str
    servers_needed: int | None
    """ceil(target_rps / (best.server_rps x utilization)); null without a target"""
    price_per_hour: float | None
    cost_per_million_requests: float | None
    """price_per_hour / (best.server_rps x utilization x 3600) x 1e6"""
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PlanResult:
    """Output of ``roofline plan --json``."""

    __pydantic_config__ = PYDANTIC_CONFIG

    model: str
    precision: str
    batch: int
    """requests per instance call"""
    seq_len: int
    target_rps: float | None
    latency_target_s: float | None
    utilization: float
    """planned utilization of each server (headroom = 1 - utilization)"""
    cpus: list[CpuPlan]
    notes: list[str] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION
