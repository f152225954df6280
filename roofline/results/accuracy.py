"""Result type of ``roofline accuracy``: every record's figures against the two ceilings and the
realistic estimate, and the summaries (SI units; errors are ``predicted / measured - 1``; tightness
is measured performance over the attainable ceiling's)."""

from __future__ import annotations

from dataclasses import dataclass, field

from roofline.results import JsonResult
from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.stack import Accuracy

SCHEMA_VERSION = 2


@dataclass(frozen=True)
class AccuracyRow:
    __pydantic_config__ = PYDANTIC_CONFIG

    record: str
    platform: str
    stack: str
    phase: str
    """forward (an encoder), prefill or decode"""
    kind: str
    """latency, gemm, throughput, tokens_per_s (absolute), speedup, linear_speedup, non_gemm_speedup, gemm_share"""
    precision: str
    baseline: str | None
    what: str
    measured: float
    ceiling: float
    """the attainable ceiling's figure (the licence clock of the busy cores, STREAM-class bandwidth)"""
    ceiling_error: float
    bound: float
    """the bound's figure (the highest clock the datasheet allows, theoretical bandwidth)"""
    tightness: float | None
    """measured performance over the attainable ceiling's (absolute figures; null for ratios)"""
    of_bound: float | None
    """measured performance over the bound's (absolute figures)"""
    violation: bool
    """a measured performance above the bound's (absolute figures only): the model or its inputs are wrong"""
    suspect: bool
    """measured more than twice the attainable ceiling: its inputs are suspect, and it is left out of the fit"""
    unstable: bool
    """its runs in the source disagree by more than 25%: neither fitted nor scored"""
    realistic: float | None
    """predicted with the stack refitted without this record's platform; null for a stack without a profile"""
    realistic_error: float | None
    realistic_in_sample: float | None
    """predicted with the stack fitted on every record"""
    path_class: str | None = None
    """the compute path class most of its GEMM rows run on (a speedup's: its new precision's), what the stack's
    accuracy per class (``accuracy.classes``) groups it by"""
    batch: int = 1
    """the sequences (or samples) of one step: a batched decode's B"""

    @property
    def in_sample_error(self) -> float | None:
        """``realistic_in_sample / measured - 1``: a figure off in sample too is one the profile cannot fit."""
        return None if self.realistic_in_sample is None else self.realistic_in_sample / self.measured - 1


@dataclass(frozen=True)
class Spread:
    """A distribution's quartiles."""

    __pydantic_config__ = PYDANTIC_CONFIG

    n: int
    minimum: float
    p25: float
    median: float
    p75: float
    maximum: float


@dataclass(frozen=True)
class StackAccuracy:
    __pydantic_config__ = PYDANTIC_CONFIG

    stack: str
    profile: str | None
    """the profile file (null: a stack without one, checked against the ceilings only)"""
    accuracy: Accuracy | None
    in_sample_median_abs_error: float | None
    per_platform: dict[str, float] = field(default_factory=dict)
    """median |error| leave-one-platform-out, per platform"""
    per_phase: dict[str, Accuracy] = field(default_factory=dict)
    """leave-one-platform-out error per phase (forward, prefill, decode)"""
    tightness: Spread | None = None
    """measured over attainable, over the stack's absolute figures"""
    coverage: float | None = None
    """the share of its scored figures inside the median band a user would be quoted for their CPU, unseen: the
    median |error| of the stack's figures on the other platforms (:func:`~roofline.fidelity.accuracy.coverage`);
    a median band that holds covers half"""


@dataclass(frozen=True)
class GroupAccuracy:
    """The leave-one-platform-out error of a group of stacks and phases (each figure predicted by its own
    stack's profile)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    stacks: list[str]
    phases: list[str]
    accuracy: Accuracy
    coverage: float | None = None
    """as :attr:`StackAccuracy.coverage`, over the group's figures (each against its own stack's band)"""
    min_batch: int = 1
    """only figures of this many sequences or more"""


@dataclass(frozen=True)
class PlanCheck:
    """An MLPerf Server run against ``roofline plan``: the plan's server capacity of the run's layout, under its
    latency bound and request lengths, over its offline capacity of the Offline twin's layout, against the measured
    ratio of the two runs; and the plan's p50 and p99 latency at the run's rate against loadgen's, where the
    record states them."""

    __pydantic_config__ = PYDANTIC_CONFIG

    record: str
    offline_record: str
    platform: str
    stack: str
    instance_cores: int
    latency_bound_s: float
    measured_ratio: float
    plan_ratio: float
    """leave-one-platform-out: the profile refitted without the platform"""
    error: float
    """plan_ratio / measured_ratio - 1"""
    offline_instance_cores: int = 0
    """the Offline twin's cores per instance (the layout of the plan's offline capacity)"""
    measured_p50_s: float | None = None
    plan_p50_s: float | None = None
    """the plan's p50 at the run's scheduled rate (leave-one-platform-out); None: not stated, or not simulated"""
    p50_error: float | None = None
    """plan_p50_s / measured_p50_s - 1"""
    measured_p99_s: float | None = None
    plan_p99_s: float | None = None
    p99_error: float | None = None
    band: float | None = None
    """the error band the plan is also simulated at the ends of: the median |error| of the stack's other platforms'
    leave-one-out step figures"""
    plan_ratio_band: list[float] | None = None
    """the plan's ratio with every realistic service time ``1 + band`` times longer and shorter, lowest first (near a
    p99 bound the server capacity moves much more than the service time)"""
    within_band: bool | None = None
    """measured_ratio lies inside plan_ratio_band"""


@dataclass(frozen=True)
class DecoderLatency:
    """One of a Server run's TTFT or TPOT figures against the plan's simulation of its layout at its rate."""

    __pydantic_config__ = PYDANTIC_CONFIG

    kind: str
    """ttft or tpot"""
    statistic: str
    """mean or p99"""
    measured_s: float
    plan_s: float
    error: float
    """plan_s / measured_s - 1"""


@dataclass(frozen=True)
class DecoderRunCheck:
    """A decoder's serving run against ``roofline plan`` (continuous batching) of its layout
    (:mod:`roofline.fidelity.decoder_runs`): an MLPerf Offline run against the plan's offline rate, a Server run
    against its server capacity under the run's p99 TTFT and TPOT bounds (requests per second), a concurrency run
    against the plan's concurrency scenario at its users (output tokens per second)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    record: str
    platform: str
    scenario: str
    priced_by: str
    """the stack profile that priced the run's kernels (refitted without the platform)"""
    instances: int
    """instances per server"""
    instance_cores: int
    max_sequences: int
    unit: str
    """requests/s (MLPerf), or output tokens/s (a concurrency run)"""
    measured: float
    """the run's figure: samples per second (a Server run's scheduled rate), or output tokens per second"""
    plan: float
    """leave-one-platform-out: the profile refitted without the platform"""
    error: float
    """plan / measured - 1"""
    ceiling: float
    """the same plan at the attainable ceiling's service times"""
    violation: bool
    """measured above the ceiling: the model or its inputs are wrong"""
    concurrency: int | None = None
    """a concurrency run's clients"""
    ttft_bound_s: float | None = None
    tpot_bound_s: float | None = None
    latencies: list[DecoderLatency] = field(default_factory=list)
    """the run's TTFT and TPOT figures against the plan's: an MLPerf Server run's at its scheduled rate, a
    concurrency run's at its users"""


@dataclass(frozen=True)
class ExcludedRecord:
    """A record kept but not scored: the model cannot price the run."""

    __pydantic_config__ = PYDANTIC_CONFIG

    record: str
    stack: str
    platform: str
    reason: str


@dataclass(frozen=True)
class AccuracyResult(JsonResult):
    """Output of ``roofline accuracy --json``."""

    __pydantic_config__ = PYDANTIC_CONFIG

    records: int
    """records scored"""
    figures: int
    violations: int
    """figures whose measured performance beats the bound: must be 0"""
    platforms: int
    """distinct platforms among the scored records"""
    stacks: list[StackAccuracy]
    groups: list[GroupAccuracy]
    tightness: Spread | None
    """measured over attainable, over every absolute figure"""
    rows: list[AccuracyRow]
    plans: list[PlanCheck] = field(default_factory=list)
    """every Server record with an Offline twin: the plan's server/offline ratio against the measured one"""
    decoder_runs: list[DecoderRunCheck] = field(default_factory=list)
    """every decoder's MLPerf Offline and Server run: the decoder plan's rate of its layout against the run's"""
    excluded: list[ExcludedRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION
