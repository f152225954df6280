"""Result types of ``roofline validate``: the JSON contract (SI units). No torch here.

Keys scripts rely on: ``host.{cpu_model,flags,threads,torch,torchao}``;
``shapes[].{name,m,n,k,precision,kernel,numerics_ok,max_rel_error,measured_ops_per_s,
predicted_ops_per_s,achieved_fraction,ceiling_violation}``;
``end_to_end[].{precision,baseline,throughput_rps,linear_block_s,f_gemm,non_gemm_speedup,
realized_speedup,ceiling,fraction_of_ceiling,ceiling_violation}``; ``encoder[].{latency_s,ceiling_s,
ceiling_violation}``; ``contention.{cause,advice,flagged_rows}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from annotated_types import Ge, Gt, Le

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.limits import check_schema_version

SCHEMA_VERSION = 1

# Constraints checked when a report is read back (check, calibrate, plot --measured), never when one is
# built: a report with a zero dimension, a non-positive time or a negative cost is refused at load.
Count = Annotated[int, Ge(1)]
Positive = Annotated[float, Gt(0)]
NonNegative = Annotated[float, Ge(0)]
Share = Annotated[float, Gt(0), Le(1)]

@dataclass(frozen=True)
class HostResult:
    __pydantic_config__ = PYDANTIC_CONFIG

    cpu_model: str
    microarchitecture: str
    flags: dict[str, bool]
    """ISA flags that decide the GEMM paths"""
    threads: Count
    """threads the measurements used"""
    cores: Count
    sockets: Count
    hypervisor: bool
    torch: str
    torchao: str
    cpu_capability: str
    """torch.backends.cpu.get_cpu_capability()"""


@dataclass(frozen=True)
class PlatformRef:
    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    file: str
    kind: str
    """measured (the host's probe) or datasheet (a catalog entry scaled to the host's cores)"""
    date: str | None = None


@dataclass(frozen=True)
class ShapeResult:
    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    m: Count
    n: Count
    k: Count
    precision: str
    kernel: str
    """the GEMM kernel the generated code calls, with launch counts"""
    numerics_ok: bool
    max_rel_error: NonNegative | None
    """||y - ref|| / ||ref|| against a float64 reference of the same float weights"""
    quantized: bool | None
    """INT8 variants: the code calls an INT8 kernel and the error is not FP32's"""
    measured_ops_per_s: Positive | None
    """null when the variant was excluded (failed numerics, not quantized, or an error)"""
    spread: NonNegative | None
    predicted_ops_per_s: Positive
    """the roofline ceiling on the measured platform"""
    achieved_fraction: Positive | None
    predicted_bound: str
    predicted_datasheet_ops_per_s: Positive | None = None
    """the datasheet's attainable ceiling (its nominal all-core clock, STREAM-class bandwidth) at the host's cores"""
    achieved_fraction_datasheet: Positive | None = None
    predicted_datasheet_bound_ops_per_s: Positive | None = None
    """the datasheet's bound (its highest clock, theoretical bandwidth): no real run is faster"""
    achieved_fraction_datasheet_bound: Positive | None = None
    compile_s: NonNegative | None = None
    kernel_s: NonNegative | None = None
    """profiler self time of the GEMM kernel per call"""
    other_s: NonNegative | None = None
    """profiler self time of everything else per call (quantization kernels, the compiled graph's own work)"""
    ceiling_violation: bool = False
    """measured faster than its ceiling: an error in the model's inputs (named in suspect and the flags)"""
    suspect: str | None = None
    """the input that bounds the row and that the measurement contradicts: peak, bandwidth or clock"""
    flags: list[str] = field(default_factory=list)
    """problems found: numerics, not quantized, miscompile, input mutated, error"""


@dataclass(frozen=True)
class EndToEndResult:
    __pydantic_config__ = PYDANTIC_CONFIG

    precision: str
    baseline: str
    kernel: str
    numerics_ok: bool
    max_rel_error: NonNegative | None
    latency_s: Positive | None
    throughput_rps: Positive | None
    """requests per second of one instance (batch / latency)"""
    linear_block_s: Positive | None
    """profiler self time of the linear-block GEMM kernels per forward"""
    attention_s: NonNegative | None
    other_s: NonNegative | None
    f_gemm: Share | None
    """the baseline's measured linear-block share"""
    non_gemm_speedup: Positive | None
    """baseline non-GEMM time over this precision's, measured"""
    predicted_gemm_speedup: Positive | None
    """from the roofline on the measured platform"""
    ceiling: Positive | None
    """Amdahl: 1 / (f / s_pred + (1 - f) / s_non)"""
    realized_speedup: Positive | None
    """baseline latency / this latency"""
    fraction_of_ceiling: Positive | None
    linear_block_speedup: Positive | None
    linear_fraction_of_gemm_ceiling: Positive | None
    ceiling_violation: bool = False
    """the realized speedup is above its ceiling: an error in the model's inputs (named in suspect and the flags)"""
    suspect: str | None = None
    """the input that bounds the row and that the measurement contradicts: peak, bandwidth or clock"""
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DecodeKernelResult:
    """A decode-shaped GEMM (small M) over enough distinct weights to stream them from DRAM."""

    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    m: Count
    n: Count
    k: Count
    copies: Count
    """distinct weight matrices per call, enough that their bytes exceed 4x the LLC"""
    precision: str
    kernel: str
    numerics_ok: bool
    max_rel_error: NonNegative | None
    quantized: bool | None
    weight_bytes: Positive
    """weights and scales streamed per call"""
    measured_s: Positive | None
    achieved_bytes_per_s: Positive | None
    """weight_bytes / measured_s"""
    dram_bytes_per_s: Positive
    """the measured platform's DRAM read bandwidth"""
    bandwidth_fraction: Positive | None
    """achieved / measured DRAM bandwidth: the figure that matters when decode is memory-bound"""
    measured_ops_per_s: Positive | None
    predicted_ops_per_s: Positive
    """the roofline ceiling with the weights streamed from DRAM"""
    achieved_fraction: Positive | None
    spread: NonNegative | None = None
    ceiling_violation: bool = False
    """measured faster than its ceiling: an error in the model's inputs (named in suspect and the flags)"""
    suspect: str | None = None
    """the input that bounds the row and that the measurement contradicts: peak, bandwidth or clock"""
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EncoderRun:
    """One compiled encoder variant: its latency and the profiler's breakdown."""

    __pydantic_config__ = PYDANTIC_CONFIG

    precision: str
    kernel: str
    numerics_ok: bool
    max_rel_error: NonNegative | None
    latency_s: Positive | None
    spread: NonNegative | None
    throughput_rps: Positive | None
    linear_block_s: Positive | None
    attention_s: NonNegative | None
    other_s: NonNegative | None
    gemm_ops: dict[str, NonNegative] = field(default_factory=dict)
    """profiler self seconds per forward of each linear-block op"""
    compile_s: NonNegative | None = None
    non_gemm_mode: str = "fp32"
    """how the non-GEMM work ran: amp-bf16 under BF16 autocast, else fp32"""
    ceiling_s: Positive | None = None
    """the roofline ceiling of this encoder's forward on the measured platform"""
    ceiling_violation: bool = False
    """measured faster than its ceiling: an error in the model's inputs (named in suspect and the flags)"""
    suspect: str | None = None
    """the input that bounds the row and that the measurement contradicts: peak, bandwidth or clock"""
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ProcessShare:
    """Another process that ran while the canary's rounds did."""

    __pydantic_config__ = PYDANTIC_CONFIG

    comm: str
    """its command name (``/proc/[pid]/stat``)"""
    pid: int
    cpus: NonNegative
    """CPUs' worth of time it took over the sampled rounds (1.0: one CPU all the time)"""


@dataclass(frozen=True)
class ContentionResult:
    """The contention canary of a run (a fixed small GEMM timed at the start and after every timing round)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    canary: str
    """what the canary runs"""
    reference_s: Positive
    """the canary's time per GEMM the rounds are compared with: the slower of this run's start and the
    probe's (the probe's when the start itself was contended)"""
    slow_threshold: Positive
    """a round whose canary runs more than this many times the reference is contended"""
    cpu_share_drop: NonNegative
    """a round whose canary got less than this fraction of the best CPU share seen is contended"""
    best_cpu_share: NonNegative | None
    """the best share of the CPU its threads asked for that the canary got (this run and, if kept, earlier ones)"""
    max_steal: NonNegative
    """a round in which the hypervisor stole more than this share of the CPU time is contended"""
    samples: Annotated[int, Ge(0)]
    """canary samples taken (one per timing round)"""
    contended_samples: Annotated[int, Ge(0)]
    worst_ratio: Positive
    lowest_cpu_share: NonNegative | None
    worst_steal: NonNegative | None
    """null when the kernel does not report steal time"""
    steal_reported: bool
    reruns: Annotated[int, Ge(0)]
    """timing rounds run again because they were contended"""
    unresolved: Annotated[int, Ge(0)]
    """rows of this report that had to keep contended rounds after every re-run allowed: the rows
    flagged_rows counts (counted from the rows themselves, so the two always agree)"""
    flagged_rows: Annotated[int, Ge(0)]
    """rows of this report carrying a contention flag"""
    cause: str | None = None
    """what slowed the contended rounds: local (other processes on this machine), neighbours (the
    hypervisor's other guests: steal, or a slowdown with nothing else running and the clock as probed);
    null when no round was contended"""
    advice: str = ""
    """what to do about it, for that cause"""
    top_processes: list[ProcessShare] = field(default_factory=list)
    """the busiest other processes over the sampled rounds"""
    worst_other_cpus: NonNegative | None = None
    """CPUs' worth of time other processes took in the busiest round (null: /proc not readable)"""
    probe_clock_hz: Positive | None = None
    """the probe's add-chain clock of this host (null: no probe of this host)"""
    lowest_clock_hz: Positive | None = None
    """the lowest add-chain clock the canary measured after a round (null: not measured)"""
    throttled_samples: Annotated[int, Ge(0)] = 0
    """rounds whose cores ran below the probe's clock with nothing else running and no steal (frequency
    throttling: noted, never flagged)"""
    start_reference_s: Positive | None = None
    """the canary at this run's start (median of its tries)"""
    probe_reference_s: Positive | None = None
    """the canary the probe of this host measured (null: none stored beside the probe file)"""
    reference_source: str = ""
    """which of the two reference_s is, and why"""
    dispatch_contended: bool = False
    """the dispatch overhead (not a row) had to keep contended rounds"""

    @property
    def clean(self) -> bool:
        return self.unresolved == 0


@dataclass(frozen=True)
class ValidateResult:
    """Output of ``roofline validate --json``."""

    __pydantic_config__ = PYDANTIC_CONFIG

    tool: str
    date: str
    model: str
    quick: bool
    batch: Count
    seq_len: Count
    layers: Count
    """encoder layers actually built (fewer than the model's with --quick)"""
    host: HostResult
    platform: PlatformRef
    datasheet: PlatformRef | None
    tolerances: dict[str, NonNegative]
    """numerics thresholds (relative Frobenius error vs float64) for one layer; a model of L layers
    is held to sqrt(L) times these; compiled vs eager may differ by the larger of the floor and twice
    the variant's own error"""
    shapes: list[ShapeResult]
    encoder: list[EncoderRun]
    end_to_end: list[EndToEndResult]
    decode: list[DecodeKernelResult] = field(default_factory=list)
    dispatch: dict[str, NonNegative] | None = None
    """measured on this host: call_s, one call of a compiled graph; per_op_s, one more extern op inside it"""
    notes: list[str] = field(default_factory=list)
    contention: ContentionResult | None = None
    """the contention canary: whether the host gave this run the CPU it gave at the start (null: not checked)"""
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        check_schema_version(self.schema_version, SCHEMA_VERSION)
