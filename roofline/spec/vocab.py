"""The tool's vocabulary: every mode a signature, a flag or a result can name, as an enum.

Each member's value is the word the command line takes and the JSON prints, so a member compares
equal to that string (``Phase.DECODE == "decode"``) and formats as it (``f"{Phase.DECODE}"`` is
``decode``); the argument parsers, the domain and the results share these types.
"""

from __future__ import annotations

from enum import Enum


class Vocab(str, Enum):
    """A word of the vocabulary: an enum whose members are their own strings."""

    _value_: str

    def __str__(self) -> str:
        return self.value

    #: hashed as its word, so that a member finds the entry a file's plain string keyed (Enum hashes the name)
    __hash__ = str.__hash__

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @classmethod
    def words(cls) -> tuple[str, ...]:
        return tuple(m.value for m in cls)


class Phase(Vocab):
    """What one step of a model does."""

    FORWARD = "forward"
    """an encoder's pass over its tokens"""
    PREFILL = "prefill"
    """a decoder's prompt"""
    DECODE = "decode"
    """one new token per sequence, reading the KV cache"""


class AttentionForm(Vocab):
    """How an engine runs a decoder's attention (:func:`roofline.calc.ops.attention`)."""

    FUSED = "fused"
    """one kernel (flash attention): the scores stay in registers and cache, a causal query skips the keys after it"""
    UNFUSED = "unfused"
    """a KQ matmul writes every score of the cells in view (the causal mask is applied after, by the softmax), a
    softmax pass and the KQV matmul read them back: llama.cpp without flash attention"""


class MemoryModel(Vocab):
    """How the ceiling prices memory traffic."""

    LEVELS = "levels"
    """each tensor at the cache level that holds it (L2, LLC, DRAM), at the highest clock allowed"""
    PAPER = "paper"
    """the reference paper's: X, Y and the non-GEMM work from DRAM, weights from the LLC when they fit"""


class ShapeForm(Vocab):
    """How a stack profile's shape term measures a GEMM call's size (:func:`roofline.fidelity.fit.fit`)."""

    WORK = "work"
    """its multiply-accumulates per core: ``eta x W / (W + work_half)``"""
    NONE = "none"
    """no shape term: every GEMM at its class's efficiency, whatever its size"""
    TIME = "time"
    """the time its multiply-accumulates take a core at its path's peak: ``eta x t / (t + time_half_s)``"""


class Bandwidth(Vocab):
    """Which bandwidth figures of a platform file the ceiling uses."""

    MEASURED = "measured"
    THEORETICAL = "theoretical"


class TierUse(Vocab):
    """How a platform's second memory tier holds a process's pages (:mod:`roofline.calc.tiers`)."""

    BEFORE_DRAM = "before-dram"
    """placed there first, the rest in DRAM (HBM in flat mode, ``numactl --preferred``)"""
    AFTER_DRAM = "after-dram"
    """what DRAM cannot hold (CXL memory: a NUMA node without cores)"""
    CACHE = "cache"
    """a direct-mapped memory-side cache in front of DRAM (HBM in cache mode)"""
    INTERLEAVE = "interleave"
    """page by page beside DRAM, a stated share on the tier (``numactl --interleave``, weighted interleave)"""


class Ceiling(Vocab):
    """The two ceilings of a step (docs/formulas.md)."""

    BOUND = "bound"
    """nothing real may run faster: the highest clock the datasheet allows, theoretical bandwidth"""
    ATTAINABLE = "attainable"
    """the licence clock of the busy cores, STREAM-class bandwidth, datasheet ops per cycle"""


class Scenario(Vocab):
    """How a serving run offered its load: MLPerf's two scenarios, or a fixed number of clients."""

    OFFLINE = "offline"
    SERVER = "server"
    CONCURRENCY = "concurrency"
    """a closed loop of ``concurrency`` clients, each sending its next request when the last one finishes
    (``vllm bench serve --max-concurrency``, SGLang's ``bench_serving``, a llama-server with that many slots)"""
    RATE = "rate"
    """requests arriving at ``request_rate`` per second, a Poisson process, with no latency bound
    (``vllm bench serve --request-rate``)"""


class Statistic(Vocab):
    """Which statistic of a serving run's per-request latencies a figure states."""

    MEAN = "mean"
    MEDIAN = "median"
    P90 = "p90"
    P99 = "p99"


class Bound(Vocab):
    """What bounds an operation or a step. The order is the index the step evaluator stores."""

    COMPUTE = "compute"
    L2 = "L2"
    LLC = "LLC"
    DRAM = "DRAM"


class NonGemmMode(Vocab):
    """How a precision runs its non-GEMM work."""

    FP32 = "fp32"
    AMP_BF16 = "amp-bf16"
    """BF16 autocast: BF16 activations, attention on the BF16 path where native"""
    INT8 = "int8"
    """fully INT8 pipelines: INT8 activations, attention on the INT8 path"""

    @property
    def activation_dtype(self) -> str:
        return {"fp32": "fp32", "amp-bf16": "bf16", "int8": "int8"}[self.value]

    @property
    def fuses_mlp_activation(self) -> bool:
        """The MLP activation runs in the up-projection GEMM's epilogue: its ops, but no pass over memory of
        its own. INT8 pipelines do: Intel's MLPerf BERT calls ``P.linear_gelu`` for the intermediate dense layer
        (https://github.com/mlcommons/inference_results_v3.0/blob/dad59af09e9e62eceec4bee48794e201d6cf9170/closed/
        Intel/code/bert-99/pytorch-cpu/models/modeling_bert.py, ``BertIntermediate.forward``)."""
        return self is NonGemmMode.INT8


class SuspectInput(Vocab):
    """The input of a ceiling that a measurement beating it contradicts."""

    PEAK = "peak"
    """the compute path's ops per cycle (a probe that measured a slower kernel than the one that ran)"""
    BANDWIDTH = "bandwidth"
    """the bandwidth of the memory level that bounds the row"""
    CLOCK = "clock"
    """the clock the peak is priced at (a datasheet's clock below what the cores ran at)"""


class ContentionCause(Vocab):
    """Why the contention canary saw a round run slow."""

    LOCAL = "local"
    """other processes on this machine took CPU time"""
    NEIGHBOURS = "neighbours"
    """the hypervisor's other guests: steal, or a slowdown with nothing else running and the clock as probed"""
    THROTTLING = "throttling"
    """the cores ran below the probe's clock with nothing else running and no steal: noted, not contention"""


class FigureKind(Vocab):
    """What a measured figure of a record is."""

    LATENCY = "latency"
    SPEEDUP = "speedup"
    LINEAR_SPEEDUP = "linear_speedup"
    GEMM = "gemm"
    THROUGHPUT = "throughput"
    TOKENS_PER_S = "tokens_per_s"
    GEMM_SHARE = "gemm_share"
    NON_GEMM_SPEEDUP = "non_gemm_speedup"
    TTFT = "ttft"
    """a serving run's time to first token, seconds (its ``statistic`` over the requests)"""
    TPOT = "tpot"
    """a serving run's time per output token after the first, seconds (its ``statistic``)"""
    OUTPUT_TOKENS_PER_S = "output_tokens_per_s"
    """a serving run's generated tokens per second, the whole server"""
    TOTAL_TOKENS_PER_S = "total_tokens_per_s"
    """a serving run's prompt and generated tokens per second, the whole server"""
    REQUESTS_PER_S = "requests_per_s"
    """a serving run's completed requests per second"""

    @property
    def is_ratio(self) -> bool:
        """compares two precisions"""
        return self in (FigureKind.SPEEDUP, FigureKind.LINEAR_SPEEDUP, FigureKind.NON_GEMM_SPEEDUP)

    @property
    def is_rate(self) -> bool:
        """an absolute figure where higher is faster"""
        return self in (FigureKind.THROUGHPUT, FigureKind.TOKENS_PER_S)

    @property
    def is_absolute(self) -> bool:
        """a measurement of performance, which a ceiling bounds (a ratio of two runs is not)"""
        return self in (FigureKind.LATENCY, FigureKind.GEMM, FigureKind.THROUGHPUT, FigureKind.TOKENS_PER_S)

    @property
    def is_serving(self) -> bool:
        """a figure of a whole serving run (its requests' latencies, its output rate): the plan's to predict"""
        return self in (FigureKind.TTFT, FigureKind.TPOT, FigureKind.OUTPUT_TOKENS_PER_S, FigureKind.TOTAL_TOKENS_PER_S,
                        FigureKind.REQUESTS_PER_S)

    @property
    def is_latency(self) -> bool:
        """a serving run's per-request latency: it states a statistic over the requests"""
        return self in (FigureKind.TTFT, FigureKind.TPOT)


class StepPart(Vocab):
    """A part of a step's time."""

    ALL = "all"
    LINEAR = "linear"
    """the GEMM kernels and their epilogue (the paper's linear block)"""
    NON_GEMM = "non_gemm"


def coerce(obj: object, **fields: type[Vocab]) -> None:
    """In a frozen dataclass's ``__post_init__``: each named field's word as its vocabulary member (a
    spec built in Python may give the plain string; None stays None). A word outside the vocabulary is
    a ValueError naming the field."""
    for name, vocab in fields.items():
        value = getattr(obj, name)
        if value is None or isinstance(value, vocab):
            continue
        if value not in vocab.words():
            raise ValueError(f"{name}: one of {', '.join(vocab.words())}, got {value!r}")
        object.__setattr__(obj, name, vocab(value))
