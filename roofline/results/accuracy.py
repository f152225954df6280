"""Result type of ``roofline accuracy``: every record's figures against the ceiling and the realistic
estimate, and the summary (SI units; errors are ``predicted / measured - 1``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from roofline.results import JsonResult
from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.stack import Accuracy

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class AccuracyRow:
    __pydantic_config__ = PYDANTIC_CONFIG

    record: str
    platform: str
    stack: str
    kind: str
    """latency, gemm, throughput (absolute), speedup, linear_speedup, non_gemm_speedup, gemm_share"""
    precision: str
    baseline: str | None
    what: str
    measured: float
    ceiling: float
    ceiling_error: float
    violation: bool
    """a measured performance above the ceiling's (latency, gemm, throughput only)"""
    realistic: float | None
    """predicted with the stack refitted without this record's platform; null for a stack without a profile"""
    realistic_error: float | None
    realistic_in_sample: float | None
    """predicted with the stack fitted on every record"""


@dataclass(frozen=True)
class StackAccuracy:
    __pydantic_config__ = PYDANTIC_CONFIG

    stack: str
    profile: str | None
    """the profile file (null: a stack without one, checked against the ceiling only)"""
    accuracy: Accuracy | None
    in_sample_median_abs_error: float | None
    per_platform: dict[str, float] = field(default_factory=dict)
    """median |error| leave-one-platform-out, per platform"""


@dataclass(frozen=True)
class AccuracyResult(JsonResult):
    """Output of ``roofline accuracy --json``."""

    __pydantic_config__ = PYDANTIC_CONFIG

    records: int
    figures: int
    violations: int
    """figures whose measured performance beats the ceiling: must be 0"""
    stacks: list[StackAccuracy]
    rows: list[AccuracyRow]
    notes: list[str] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION
