"""A measurement record: one measured result (a validate report, a paper's table, a published run),
as data, with its source. ``validation/records/*.toml``; ``roofline accuracy`` compares every
record with the ceiling and the realistic estimate, ``roofline calibrate --records`` fits stack
profiles from them.

Each record names the platform (a catalog entry, plus the cores and instances the run used), the
workload (model, batch, sequence, phase), the software stack, and its measured figures:

- ``latency``: seconds per step of one instance (a validate encoder: ``embeddings = false``);
- ``speedup``: the throughput of ``precision`` over ``baseline``'s; ``linear_speedup``: the same for
  the linear block (the GEMM kernels' time);
- ``gemm``: seconds of one linear compiled and called on its own (``name``, ``m``, ``n``, ``k``);
- ``throughput``: steps (requests) per second of the whole platform;
- ``tokens_per_s``: tokens per second of the whole platform (a prefill step's ``batch x seq_len`` tokens,
  a decode step's ``batch``), as LLM engines report them (llama-bench's pp and tg);
- ``gemm_share``: the linear block's share of ``precision``'s time (the paper's ``f_GEMM``);
- ``non_gemm_speedup``: the speedup of everything but the linear block over ``baseline``'s (``s_non``).

A record may instead point at a committed validate report (``report``), whose timed, numerically
checked encoder runs and shapes become its figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.limits import check
from roofline.spec.precision import RECIPES
from roofline.spec.vocab import FigureKind, NonGemmMode, Phase, Scenario, Statistic, coerce

SCHEMA_VERSION = 1


def is_iso_date(text: str) -> bool:
    """``text`` is a calendar date written YYYY-MM-DD (``2026-12-06``; not ``12/06/2026``, not ``2026-02-30``)."""
    import datetime
    import re

    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True

@dataclass(frozen=True)
class Citation:
    """Where one statement of a record comes from: a page or a file (a repository, a path, a commit and a
    line) and the words it says it in."""

    __pydantic_config__ = PYDANTIC_CONFIG

    url: str
    what: str = ""
    """what the source states for the record (the figure, the system description, the command)"""
    repo: str | None = None
    path: str | None = None
    commit: str | None = None
    line: int | None = None
    quote: str = ""
    """the source's own words"""


#: the latency percentiles a Server record may state (the plan's simulation reports p50 and p99)
SERVER_PERCENTILES = (50, 99)


@dataclass(frozen=True)
class ServerLatency:
    """A latency percentile of an MLPerf Server run at its scheduled rate, as loadgen's summary states it
    (``50.00 percentile latency (ns)``): a figure of ``roofline plan``'s latency at that rate."""

    __pydantic_config__ = PYDANTIC_CONFIG

    percentile: int
    """50 or 99: the percentiles the plan's simulation reports"""
    value: float
    """seconds (the summary's nanoseconds / 1e9)"""
    line: int
    """its line in the record's source file (the run's summary)"""
    quote: str = ""
    """the summary's own line"""

    def __post_init__(self) -> None:
        if self.percentile not in SERVER_PERCENTILES:
            raise ValueError(f"percentile: one of {', '.join(map(str, SERVER_PERCENTILES))} (the plan reports "
                             f"those), got {self.percentile}")
        if not (self.value == self.value and 0 < self.value <= 3600):
            raise ValueError(f"value: a positive number of seconds up to 3,600, got {self.value}")
        if self.line < 1:
            raise ValueError(f"line: 1 or more, got {self.line}")


@dataclass(frozen=True)
class RecordPlatform:
    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    """a catalog platform (name or alias)"""
    cores: int | None = None
    """cores used per socket (default: all)"""
    sockets: int | None = None
    """sockets used (default: all)"""
    instance_cores: int | None = None
    """cores per instance (default: one instance of all the cores used, a single process)"""
    memory_channels: int | None = None
    """memory channels populated per socket, when fewer than the platform file's (its bandwidths scale)"""

    def __post_init__(self) -> None:
        for name in ("cores", "sockets", "instance_cores", "memory_channels"):
            v = getattr(self, name)
            if v is not None and not 1 <= v <= 4096:
                raise ValueError(f"{name}: 1 to 4096, got {v}")


@dataclass(frozen=True)
class Measurement:
    __pydantic_config__ = PYDANTIC_CONFIG

    kind: FigureKind
    precision: str
    value: float
    """seconds (latency, gemm), a ratio (speedups) or per second (throughput)"""
    baseline: str | None = None
    """speedups: the precision they are over"""
    non_gemm_mode: NonGemmMode | None = None
    """how the run's non-GEMM work ran (default: the recipe's)"""
    phase: Phase | None = None
    """this figure's phase, when it differs from the record's (a llama.cpp run's pp and tg)"""
    batch: int | None = None
    """sequences in this figure's steps, when they differ from the record's (llama-batched-bench's ``B``)"""
    seq_len: int | None = None
    context: int | None = None
    """tokens already in each sequence's KV cache: a decode step's mean over the timed steps, or before a
    prefill (a prompt at a depth: llama-bench's ``-d``, a chunked prompt, a second turn)"""
    statistic: Statistic | None = None
    """a serving figure's statistic over the run's requests (ttft, tpot)"""
    kv_dtype: str | None = None
    """the KV cache's element type in the run (default: the activation dtype)"""
    name: str | None = None
    m: int | None = None
    n: int | None = None
    k: int | None = None
    note: str = ""
    quote: str = ""
    """the source's own words for this figure"""
    line: int | None = None
    """its line in the record's source file"""
    spread: str = ""
    """the spread the source states (``± 0.10``, a standard deviation)"""
    repeats: tuple[float, ...] = ()
    """the same command's other runs in the same source (a citation of the record names them): a figure whose
    runs disagree by more than ``roofline.fidelity.accuracy.UNSTABLE_SPREAD`` is kept, not scored"""
    ceiling_violation: bool = False
    """the validate report this figure comes from measured it faster than that run's own ceiling (its
    probe's): counted by ``roofline accuracy`` as a violation whatever the record's platform predicts"""

    def __post_init__(self) -> None:
        coerce(self, kind=FigureKind, non_gemm_mode=NonGemmMode, phase=Phase, statistic=Statistic)
        for name in ("batch", "seq_len"):
            v = getattr(self, name)
            if v is not None and not 1 <= v <= 1_000_000:
                raise ValueError(f"{name}: 1 to 1e6, got {v}")
        if self.context is not None and not 0 <= self.context <= 10_000_000:
            raise ValueError(f"context: 0 to 1e7 tokens, got {self.context}")
        if self.kind.is_latency != (self.statistic is not None):
            raise ValueError(f"statistic: a {self.kind} figure " + ("needs the statistic its source states (mean, "
                             "median, p90, p99)" if self.kind.is_latency else "has none (only ttft and tpot do)"))
        if not (self.value == self.value and 0 < self.value < 1e12):
            raise ValueError(f"value: a positive finite number, got {self.value}")
        if any(not (v == v and 0 < v < 1e12) for v in self.repeats):
            raise ValueError(f"repeats: positive finite numbers, got {list(self.repeats)}")
        if self.kind is FigureKind.GEMM_SHARE and not self.value < 1:
            raise ValueError(f"value: a share of time in (0, 1), got {self.value}")
        if self.kind.is_ratio and not self.baseline:
            raise ValueError(f"baseline: a {self.kind} needs the precision it is over")
        if self.kind is FigureKind.GEMM and not (self.m and self.n and self.k):
            raise ValueError("m, n, k: a gemm figure needs its shape")


@dataclass(frozen=True)
class Record:
    __pydantic_config__ = PYDANTIC_CONFIG

    description: str
    source: str
    """where the figures come from: a command and its output, a paper and table, a URL"""
    stack: str
    """the software stack (a profile in platforms/stacks, or another name: then it is checked against the
    ceiling only)"""
    platform: RecordPlatform
    model: str
    batch: int = 1
    seq_len: int = 256
    phase: Phase | None = None
    context: int | None = None
    layers: int | None = None
    """the layers the run built (default: the model's)"""
    shared_prompt: bool = False
    """batched decoding: every sequence continues one prompt whose KV cells they share (llama-batched-bench
    ``-pps``)"""
    flash_attention: bool | None = None
    """the run's attention was one fused kernel (llama.cpp ``-fa on``, or ``auto`` where the backend has it) or not
    (``-fa off``), where the command or its output says; not given: the stack's rule at the record's date"""
    embeddings: bool = True
    """the run included the embedding lookup (a validate encoder takes hidden states: false)"""
    quantize_lm_head: bool = False
    """decoders: the lm_head in the precision too (llama.cpp quantizes it with the rest)"""
    lm_head_precision: str | None = None
    """decoders: the lm_head in a precision of its own (OpenVINO's 4-bit weight compression keeps the last
    linear layer in INT8: ``int8-weight-only``)"""
    measurements: tuple[Measurement, ...] = ()
    report: str | None = None
    """a validate report (path relative to this file) whose figures this record takes"""
    date: str = ""
    engine: str = ""
    """the engine and its version or build, as the source states them"""
    threads: int | None = None
    """threads the run used, when the source states them"""
    numa: str = ""
    """NUMA / SNC / NPS mode and page placement, as the source states them"""
    memory: str = ""
    """the memory configuration, as the source states it"""
    scenario: Scenario | None = None
    """MLPerf's scenario: offline, or server (Poisson arrivals under ``latency_bound_s`` at p99)"""
    latency_bound_s: float | None = None
    request_lengths: str | None = None
    """a histogram file of the run's request lengths (relative to this file): a server figure's lengths"""
    server_latencies: tuple[ServerLatency, ...] = ()
    """a Server run's latency percentiles at its scheduled rate (from the same summary as its rate)"""
    concurrency: int | None = None
    """a concurrency run's clients (``scenario = "concurrency"``): requests in flight at once"""
    prompt_len: int | None = None
    """a serving run's prompt tokens per request (the mean of its data set where lengths vary: ``assumed`` says so)"""
    output_len: int | None = None
    """a serving run's generated tokens per request (the mean, likewise)"""
    num_prompts: int | None = None
    """a serving run's requests"""
    request_rate: float | None = None
    """a rate run's offered requests per second (``scenario = "rate"``)"""
    tensor_parallel: int | None = None
    """ranks one model is split over (SGLang's ``--tp``), when the source states it"""
    instances: int | None = None
    """engine processes serving the load side by side, when the source states them"""
    max_batch_tokens: int | None = None
    """a Server run's batching, as its harness sets it: tokens per batch at most (default: the plan's)"""
    batch_watermark_tokens: int | None = None
    """a Server run's batching: a batch closes once its tokens reach this many (Intel's BERT harness: ``-w``)"""
    max_sequences: int | None = None
    """a decoder serving run's sequences in flight per instance at most: the engine's cap on running requests, or
    the requests its client keeps in flight where fewer"""
    tpot_bound_s: float | None = None
    """a decoder Server run's p99 time-per-output-token bound (``latency_bound_s`` holds its TTFT bound)"""
    priced_by: str | None = None
    """a decoder serving run of an engine with no stack profile: the stack whose profile prices its kernels (the
    reason in ``assumed``); the run is then scored as the decoder plan's prediction of its layout"""
    citations: tuple[Citation, ...] = ()
    """every other place a statement of this record comes from (the system description, the command, ...)"""
    assumed: dict[str, str] = field(default_factory=dict)
    """what the source does not state and the record assumes: field -> the value and why"""
    not_stated: tuple[str, ...] = ()
    """what the source does not state and nothing here depends on"""
    excluded: str | None = None
    """kept, but not scored: why the model cannot price this run (an engine feature it does not model)"""
    schema_version: int = SCHEMA_VERSION

    def engine_cores(self, cores_per_socket: int) -> int:
        """The cores of one engine process that runs a rate figure (a llama.cpp run): the cores the record names,
        else every core of a socket (a record that names no layout ran one process on the cores it used)."""
        return self.platform.cores or cores_per_socket

    def figure_instance_cores(self, rate: bool, cores_per_socket: int) -> int | None:
        """The instance a figure is priced on: the record's, else for a rate figure (``rate``) one engine process
        (:meth:`engine_cores`), else None (the layout's default; a tensor-parallel split's: every core used)."""
        if self.split > 1:
            return self.platform.instance_cores
        return self.platform.instance_cores or (self.engine_cores(cores_per_socket) if rate else None)

    @property
    def split(self) -> int:
        """the ranks the model is split over (``tensor_parallel``; 1: not split)"""
        return self.tensor_parallel or 1

    def __post_init__(self) -> None:
        coerce(self, phase=Phase, scenario=Scenario)
        if self.schema_version > SCHEMA_VERSION:
            raise ValueError(f"schema_version: {self.schema_version} is newer than this roofline reads "
                             f"({SCHEMA_VERSION}); upgrade roofline")
        if not self.measurements and not self.report:
            raise ValueError("measurements: give the measured figures, or a report to take them from")
        if self.date and not is_iso_date(self.date):
            raise ValueError(f"date: a date as YYYY-MM-DD (2026-12-06), got {self.date[:40]!r}; a record's date is "
                             "compared with the stack rules' dates")
        if not 1 <= self.batch <= 1_000_000 or not 1 <= self.seq_len <= 1_000_000:
            raise ValueError("batch, seq_len: 1 to 1e6")
        if self.threads is not None and not 1 <= self.threads <= 65536:
            raise ValueError(f"threads: 1 to 65,536, got {self.threads}")
        if self.latency_bound_s is not None and not (self.latency_bound_s == self.latency_bound_s
                                                     and 0 < self.latency_bound_s <= 3600):
            raise ValueError(f"latency_bound_s: a positive number of seconds up to 3,600, got {self.latency_bound_s}")
        if self.lm_head_precision is not None:
            if self.lm_head_precision not in RECIPES:
                raise ValueError(f"lm_head_precision: {self.lm_head_precision!r} is not a precision (one of "
                                 f"{', '.join(sorted(RECIPES))})")
            if self.quantize_lm_head:
                raise ValueError("lm_head_precision: give it or quantize_lm_head, not both")
        if (self.scenario is Scenario.SERVER) != (self.latency_bound_s is not None):
            raise ValueError("latency_bound_s: a server scenario's figure needs its latency bound, and only it")
        if (self.scenario is Scenario.CONCURRENCY) != (self.concurrency is not None):
            raise ValueError("concurrency: a concurrency scenario's figure needs its clients, and only it")
        if (self.scenario is Scenario.RATE) != (self.request_rate is not None):
            raise ValueError("request_rate: a rate scenario's figure needs its offered rate, and only it")
        if self.request_rate is not None and not (self.request_rate == self.request_rate
                                                  and 0 < self.request_rate <= 1e6):
            raise ValueError(f"request_rate: a positive number of requests per second up to 1e6, got "
                             f"{self.request_rate}")
        for name in ("concurrency", "prompt_len", "output_len", "num_prompts", "tensor_parallel", "instances"):
            v = getattr(self, name)
            if v is not None and not 1 <= v <= 10_000_000:
                raise ValueError(f"{name}: 1 to 1e7, got {v}")
        serving = [m.kind for m in self.measurements if m.kind.is_serving]
        if serving and (self.prompt_len is None or self.output_len is None):
            raise ValueError(f"prompt_len, output_len: a serving run's {serving[0]} figure needs the tokens per request "
                             "it ran (its data set's means, said in assumed, where they vary)")
        if self.server_latencies and self.scenario is not Scenario.SERVER:
            raise ValueError("server_latencies: only a server scenario's run states latencies at its rate")
        if len({x.percentile for x in self.server_latencies}) < len(self.server_latencies):
            raise ValueError("server_latencies: each percentile once")
        for name in ("max_batch_tokens", "batch_watermark_tokens", "max_sequences"):
            v = getattr(self, name)
            check(f"record.{name}", v, name)
        if self.batch_watermark_tokens is not None and self.scenario is not Scenario.SERVER:
            raise ValueError("batch_watermark_tokens: a server scenario's batching; this run states no scenario server")
        if self.max_batch_tokens is not None and self.scenario not in (Scenario.SERVER, Scenario.OFFLINE):
            raise ValueError("max_batch_tokens: an MLPerf Server or Offline run's batching; this run states neither "
                             "scenario")
        if self.max_sequences is not None and self.scenario not in (Scenario.SERVER, Scenario.OFFLINE,
                                                                     Scenario.CONCURRENCY):
            raise ValueError("max_sequences: a serving run's running requests per instance (scenario server, offline "
                             "or concurrency)")
        if self.tpot_bound_s is not None:
            if self.scenario is not Scenario.SERVER:
                raise ValueError("tpot_bound_s: a server scenario's bound; this run states no scenario server")
            if not (self.tpot_bound_s == self.tpot_bound_s and 0 < self.tpot_bound_s <= 3600):
                raise ValueError(f"tpot_bound_s: a positive number of seconds up to 3,600, got {self.tpot_bound_s}")
        if self.priced_by is not None and (self.scenario not in (Scenario.SERVER, Scenario.OFFLINE)
                                           or not self.request_lengths or self.output_len is None
                                           or self.max_sequences is None):
            raise ValueError("priced_by: a decoder's MLPerf Server or Offline run, with its request_lengths, "
                             "output_len and max_sequences beside it")
        if self.batch_watermark_tokens is not None and (self.max_batch_tokens is None
                                                        or self.batch_watermark_tokens > self.max_batch_tokens):
            raise ValueError(f"batch_watermark_tokens: {self.batch_watermark_tokens} needs max_batch_tokens beside it, "
                             "at least as large (a batch closes at the first of the two)")
