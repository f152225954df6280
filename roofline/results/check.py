"""Result type of ``roofline check``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from roofline.results import JsonResult
from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.stack import Accuracy

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class CheckRow:
    """One line of the paper's Table 14: a measured speedup beside its ceiling."""

    __pydantic_config__ = PYDANTIC_CONFIG

    metric: Literal["throughput", "linear block"]
    measured: float
    ceiling: float
    """end to end (Amdahl) for throughput, the GEMM speedup for the linear block"""
    fraction_of_ceiling: float
    realistic: float
    """the ceiling with the overhead terms added"""
    fraction_of_realistic: float
    ceiling_violation: bool = False
    """the measured speedup is above its ceiling: one of the ceiling's inputs is off (suspect names it)"""
    suspect: str | None = None
    """peak, bandwidth or clock: the input bounding the precision's GEMMs"""


@dataclass(frozen=True)
class CheckTerm:
    """A named overhead term and its size."""

    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    seconds: float
    """per forward pass, on the platform"""
    share_of_baseline: float
    """seconds over the baseline's time"""
    share_of_gap: float | None
    """of the gap between the ceiling and the measurement (null when there is no gap)"""
    how: str
    calibrated: bool


@dataclass(frozen=True)
class Comparison:
    """One precision against one baseline."""

    __pydantic_config__ = PYDANTIC_CONFIG

    precision: str
    baseline: str
    f_gemm: float
    f_gemm_source: str
    gemm_speedup: float
    non_gemm_speedup: float
    baseline_time_s: float
    """the baseline's time per forward the terms are measured against"""
    rows: list[CheckRow]
    terms: list[CheckTerm]
    explained_gap: float
    """share of the throughput gap the terms explain (0 when there is no gap)"""
    unexplained: float
    """the gap the terms leave, as a share of the baseline's time"""
    suspect_detail: str = ""
    """when a row beats its ceiling: the input bounding the precision's GEMMs, its value and source"""


@dataclass(frozen=True)
class LatencyRow:
    """A measured time beside the ceiling and the realistic estimate (report mode)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    what: str
    """"encoder", or a GEMM shape name"""
    precision: str
    measured_s: float
    ceiling_s: float
    realistic_s: float
    ceiling_error: float
    """ceiling_s / measured_s - 1"""
    realistic_error: float
    """realistic_s / measured_s - 1"""
    ceiling_violation: bool = False
    """measured faster than the bound: an error in the model's inputs (suspect names the one bounding it)"""
    suspect: str | None = None
    """peak, bandwidth or clock"""
    suspect_detail: str = ""
    """the suspect input with its value and source"""
    bound_s: float | None = None
    """the bound's time (the highest clock the datasheet allows, theoretical bandwidth); ``ceiling_s`` is the
    attainable ceiling's"""
    of_attainable: float | None = None
    """ceiling_s / measured_s: the share of the attainable ceiling the run reached"""
    of_bound: float | None = None
    """bound_s / measured_s"""


@dataclass(frozen=True)
class CheckResult(JsonResult):
    """Output of ``roofline check --json``."""

    __pydantic_config__ = PYDANTIC_CONFIG

    model: str
    cpu: str
    source: str
    """typed: speedups given on the command line; else the validate report they came from"""
    calibration: str | None
    comparisons: list[Comparison]
    latency: list[LatencyRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    memory_model: Literal["levels", "paper"] = "levels"
    """the ceiling's memory model (see the estimate's)"""
    stack: str | None = None
    """the software-stack profile the realistic estimate used (none with a calibration or a report)"""
    realistic_accuracy: Accuracy | None = None
    """the stack profile's measured error, leave-one-platform-out over its records"""
    schema_version: int = SCHEMA_VERSION
