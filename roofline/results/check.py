"""Result type of ``roofline check``.

Keys scripts rely on: ``comparisons[].rows[]`` (measured speedups), ``rates[].{what,precision,measured,ceiling,
realistic,fraction_of_ceiling,fraction_of_realistic}`` (measured rates: ``--tokens-per-s``,
``--samples-per-s``, ``--from``), ``measured_from.{path,format,inputs[],left_out[]}`` (``--from``).

``check --from FILE`` (a llama-bench result, an MLPerf summary) fills ``rates`` with one row per test or
scenario of the file, and ``measured_from`` with the file and every input the comparison took, each with
where it came from: the file, a flag, or an assumption (said why); the flags that state the same
measurement (``--tokens-per-s``, ``--samples-per-s``) give the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from roofline.results import JsonResult
from roofline.results.estimate import ErrorBand, LeftOut
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
    error_band: ErrorBand | None = None
    """the realistic speedup's expected error: its precision's (null without a stack profile's accuracy)"""


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
class RateRow:
    """A measured rate of the whole platform (llama-bench's tokens/s, MLPerf's samples/s) beside the ceiling and
    the realistic estimate of the same step. ``terms`` are the realistic model's named terms, in seconds per
    step of the whole platform; for them ``share_of_baseline`` is of the ceiling's step time and
    ``share_of_gap`` of the gap between the measured step time and the ceiling's."""

    __pydantic_config__ = PYDANTIC_CONFIG

    what: str
    """the test or scenario: ``pp512``, ``tg128``, ``Offline``"""
    precision: str
    phase: Literal["forward", "prefill", "decode"]
    unit: Literal["tokens/s", "samples/s"]
    batch: int
    seq_len: int | None
    """the prompt (prefill) or a sample's tokens (forward); null for decode"""
    context: int | None
    """decode: tokens in the KV cache (llama-bench's tg N from an empty cache: N / 2 on average)"""
    cores: int
    """cores the run used, all sockets"""
    instances: int
    measured: float
    spread: float | None
    """the measurement's relative standard deviation (llama-bench's stddev over its mean), when stated"""
    ceiling: float
    bound: str
    """what bounds the ceiling's step (compute, L2, LLC, DRAM)"""
    fraction_of_ceiling: float
    realistic: float
    fraction_of_realistic: float
    terms: list[CheckTerm]
    unexplained: float
    """the measured step time the terms leave, as a share of the ceiling's step time (0 when they explain it all)"""
    stack: str | None = None
    """the engine's stack profile the realistic estimate used (null: none, the ceiling plus the priced terms)"""
    error_band: ErrorBand | None = None
    """the realistic rate's expected error (null without a stack profile's accuracy)"""
    upper_bound: float | None = None
    """the bound: the same step at the highest clock the datasheet allows and the theoretical bandwidth (no real run
    may be faster); ``ceiling`` is the attainable ceiling"""
    fraction_of_upper_bound: float | None = None
    suspect: str | None = None
    """when the measured rate is above the bound: the likely errors in the measurement or its description"""


@dataclass(frozen=True)
class MeasuredInput:
    """One input of a check from a file, and where it came from."""

    __pydantic_config__ = PYDANTIC_CONFIG

    what: str
    value: str
    source: Literal["file", "flag", "assumed"]
    detail: str
    """the field and the line of the file, the flag, or why the value is assumed"""


@dataclass(frozen=True)
class MeasuredFrom:
    """The file a check read its measurements from."""

    __pydantic_config__ = PYDANTIC_CONFIG

    path: str
    format: str
    """``llama-bench -o json``, ``MLPerf loadgen summary``, ..."""
    tool: str
    """what the file says produced it (llama-bench's build, loadgen's SUT)"""
    inputs: list[MeasuredInput]
    left_out: list[LeftOut] = field(default_factory=list)
    """tests or figures of the file not compared, and why"""


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
    rates: list[RateRow] = field(default_factory=list)
    """measured rates (``--tokens-per-s``, ``--samples-per-s``, ``--from``) against their ceilings"""
    measured_from: MeasuredFrom | None = None
    """``--from``: the file and every input the rates took, with its source"""
    schema_version: int = SCHEMA_VERSION
