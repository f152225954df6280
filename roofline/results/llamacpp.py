"""Result type of ``roofline validate --engine llama.cpp``: the JSON contract (SI units). No llama_cpp here.

Keys scripts rely on: ``host.{cpu_model,threads,llama_cpp_python,system_info}``;
``runs[].{precision,file_bytes,pp.{tokens_per_s,ceiling_tokens_per_s,achieved_fraction},
tg.{tokens_per_s,ceiling_tokens_per_s,achieved_fraction}}``; ``comparisons[]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roofline.results.validate import PlatformRef
from roofline.spec import PYDANTIC_CONFIG

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class LlamaCppHost:
    __pydantic_config__ = PYDANTIC_CONFIG

    cpu_model: str
    microarchitecture: str
    flags: dict[str, bool]
    threads: int
    """threads llama.cpp ran with (and the CPUs the process was pinned to)"""
    cores: int
    llama_cpp_python: str
    gguf: str
    system_info: str
    """llama_print_system_info(): the SIMD paths llama.cpp was built with"""


@dataclass(frozen=True)
class RateResult:
    """One llama-bench style test: ``pp N`` (a prompt of N tokens in one batch) or ``tg N`` (N tokens
    generated one at a time from an empty cache)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    test: str
    """pp512, tg128, ..."""
    tokens: int
    samples_tokens_per_s: list[float]
    """one per repetition"""
    tokens_per_s: float
    """median of the repetitions"""
    spread: float
    """(max - min) / median of the repetitions"""
    ceiling_tokens_per_s: float
    """the roofline ceiling on the measured platform"""
    ceiling_bound: str
    achieved_fraction: float
    ceiling_datasheet_tokens_per_s: float | None = None
    achieved_fraction_datasheet: float | None = None


@dataclass(frozen=True)
class BatchedResult:
    """One llama-batched-bench style test: ``sequences`` prompts of ``prompt`` tokens each decoded together (the
    prefill), then ``generated`` tokens for each, every step one token of every sequence (the decode). Rates are
    tokens per second of the whole process, medians of the repetitions."""

    __pydantic_config__ = PYDANTIC_CONFIG

    sequences: int
    prompt: int
    generated: int
    prefill_samples_tokens_per_s: list[float]
    prefill_tokens_per_s: float
    decode_samples_tokens_per_s: list[float]
    decode_tokens_per_s: float
    """``sequences x generated / seconds`` of the decode steps (``S_TG``)"""
    decode_spread: float
    """(max - min) / median of the decode repetitions"""


@dataclass(frozen=True)
class DepthResult:
    """A prompt of ``pp`` tokens and a generation of ``tg`` tokens, each after ``depth`` tokens already in the cache
    (llama-bench's ``pp N @ d D`` and ``tg N @ d D``)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    depth: int
    pp: RateResult
    tg: RateResult


@dataclass(frozen=True)
class LlamaCppRun:
    __pydantic_config__ = PYDANTIC_CONFIG

    precision: str
    """the GGUF recipe the weights were written in (and the ceilings computed with)"""
    ggml_types: dict[str, int]
    """weight tensors of each GGML type in the file"""
    file_bytes: int
    write_s: float
    load_s: float
    weight_bytes_per_token: float
    """weights a decode step reads (the estimate's; the embedding table is looked up, not read)"""
    kv_bytes_per_token: float
    """KV cache a decode step reads at the mean context of the tg test"""
    pp: RateResult
    tg: RateResult
    tg_weight_bytes_per_s: float
    """tg rate x weight bytes per token: the weight bandwidth generation achieved"""
    batched: list[BatchedResult] = field(default_factory=list)
    """decode of several sequences at once (``--parallel``), in the order asked"""
    depth: DepthResult | None = None
    """the pp and tg tests at a KV depth (``--depth``)"""


@dataclass(frozen=True)
class Comparison:
    """Two precisions' tg rates against the ratio their bytes allow."""

    __pydantic_config__ = PYDANTIC_CONFIG

    precision: str
    baseline: str
    tg_speedup: float
    """measured tg rate over the baseline's"""
    ceiling_speedup: float
    """decode ceiling over the baseline's"""
    bytes_ratio: float
    """baseline weight bytes per token over this precision's"""
    pp_speedup: float


@dataclass(frozen=True)
class LlamaCppResult:
    """Output of ``roofline validate --engine llama.cpp --json``."""

    __pydantic_config__ = PYDANTIC_CONFIG

    tool: str
    date: str
    command: str
    engine: str
    model: str
    layers: int
    host: LlamaCppHost
    platform: PlatformRef
    datasheet: PlatformRef | None
    settings: dict[str, str]
    """n_ctx, n_batch, flash_attn, KV type, mmap, repetitions, warm-up, seed"""
    runs: list[LlamaCppRun]
    comparisons: list[Comparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION
