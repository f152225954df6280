"""A software stack's profile: how close its kernels come to the roofline on any CPU, fitted from
measurement records (``roofline calibrate --records``) and stored as data
(``platforms/stacks/<name>.toml``). Where a host calibration fits one machine, a stack profile is
what a user predicting an unseen CPU has: efficiencies per compute path class, a shape term, the
non-GEMM and quantization efficiencies, dispatch, and the kernels the stack really runs (path
rules). Every value says which records it was fitted from; the profile carries its own measured
accuracy (leave-one-platform-out).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from roofline.calc.aggregate import geometric_mean
from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.limits import check, check_sourced
from roofline.spec.mla import MlaRule
from roofline.spec.record import is_iso_date
from roofline.spec.sourced import Sourced
from roofline.spec.vocab import AttentionForm, ShapeForm

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class PathRule:
    """The stack runs ``dtype`` GEMMs on ``vendor``'s CPUs on the ``isa_class`` path, whatever faster path
    the CPU has (e.g. MKL's FP32 GEMMs on AMD: the AVX2 kernels), and (``max_ops_per_cycle``) at most that
    rate per core: kernels written for narrower vectors than the path's (llama.cpp's 256-bit dot products on
    a full-width AVX-512 core reach half its zmm rate)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    vendor: str
    """matched case-insensitively against the platform's vendor (AMD matches AuthenticAMD; empty: every vendor)"""
    dtype: str
    isa_class: str = ""
    """the path the stack runs (empty: the ceiling's own)"""
    evidence: str = ""
    max_ops_per_cycle: float | None = None
    """the most ops per cycle per core the stack's kernels issue on that path"""
    types: tuple[str, ...] = ()
    """GGUF block types the rule is for (``q4_1``): a rule naming types applies to those types' GEMMs only, and
    only through ``chain_ops_per_cycle`` and ``unpack_per_row``; a rule naming none is the dtype's path rule"""
    chain_ops_per_cycle: float | None = None
    """the most ops per cycle per thread the types' kernel retires whatever its efficiency: its dot product adds
    each block into one accumulator, a loop-carried chain of one FMA per block (2 x the block's weights over the
    FMA's latency); a row's realistic compute time is at least its multiply-accumulates at this rate (a floor on
    the time, not a factor on the efficiency)"""
    unpack_per_row: bool = False
    """the types' kernel for a call of several activation rows unpacks every weight block again for each row
    (llama.cpp's ``ggml_vec_dot_*``, where no GEMM kernel takes the type): the row's extra vector work
    (dequantization) is its M rows' worth, not once per weight as the ceiling's best kernel does it"""
    rows_per_unpack: int = 1
    """with ``unpack_per_row``: the activation rows one unpacking of a weight block serves (1: a per-row kernel
    such as ``ggml_vec_dot_*``; a tiled kernel's tile width, e.g. 4 for llamafile's tinyBLAS): the unpacking is
    repeated ``M / rows_per_unpack`` times"""
    before: str = ""
    """``YYYY-MM-DD``: the rule holds for records dated before it (builds without the kernel that came then);
    empty: always. An estimate prices today's build, which a dated rule is not about"""
    one_row_serial: float | None = None
    """the stack's kernels for a call of one activation row (its GEMVs) load each weight block and compute on it in
    one loop per thread, with no weight reuse to hide the load behind: this share (0 to 1) of the smaller of the
    call's weight-stream time and its arithmetic at the ceiling's rates adds to the larger (1: one after the
    other), and no call of more rows takes less. A rule of its own; its dtype may be empty (every dtype)"""
    attention: bool = False
    """the stack's attention matmuls in ``dtype`` (a non-GEMM mode whose activations are ``dtype``) run the rule's
    path too, not the ceiling's (PyTorch's CPU flash attention multiplies FP32 Q K^T and P V through
    ``cpublas::gemm``, MKL's sgemm in the x86 builds, whose AVX2 kernels run on AMD); only with ``isa_class`` or
    ``max_ops_per_cycle``"""
    emulated: bool = False
    """on a CPU without native instructions for ``dtype`` whose platform file states an emulated path for it
    (``emulated = true``, its measured rate), the stack runs the dtype's GEMMs there, not autocast to FP32 as the
    ceiling prices them (PyTorch's BF16 linears on an AVX2-only CPU); the row's class is that path's
    (``bf16-emulated``) and its peak that path's rate"""

    def __post_init__(self) -> None:
        if self.one_row_serial is not None:
            if not (self.one_row_serial == self.one_row_serial and 0 <= self.one_row_serial <= 1):
                raise ValueError(f"one_row_serial: a share from 0 to 1, got {self.one_row_serial}")
            if self.types or self.isa_class or self.max_ops_per_cycle is not None or self.emulated:
                raise ValueError("one_row_serial: a rule of its own, naming only the vendor and the dtype (empty: "
                                 "every dtype)")
        if self.attention and (self.types or self.emulated or self.one_row_serial is not None
                               or not (self.isa_class or self.max_ops_per_cycle is not None)):
            raise ValueError("attention: on a dtype's path rule (isa_class or max_ops_per_cycle), which the "
                             "attention matmuls then run too")
        if self.emulated and (self.types or self.isa_class or self.max_ops_per_cycle is not None):
            raise ValueError("emulated: a rule of its own, naming only the vendor and the dtype (the emulated path's "
                             "rate is the platform file's)")
        if self.types and (self.isa_class or self.max_ops_per_cycle is not None):
            raise ValueError("a rule naming types caps their rate (chain_ops_per_cycle) or says how their kernel "
                             "unpacks (unpack_per_row) only: give the path (isa_class, max_ops_per_cycle) in a rule "
                             "of its own")
        if self.rows_per_unpack < 1 or (self.rows_per_unpack != 1 and not self.unpack_per_row):
            raise ValueError("rows_per_unpack: a whole number of rows, at least 1, and only with unpack_per_row")
        if (self.unpack_per_row or self.before) and not self.types:
            raise ValueError("unpack_per_row and before: for the GGUF types a rule names (types = [...])")
        if self.before and not is_iso_date(self.before):
            raise ValueError(f"before: a date as YYYY-MM-DD, got {self.before!r}")
        for name in ("max_ops_per_cycle", "chain_ops_per_cycle"):
            check(f"stack.path_rules.{name}", getattr(self, name), name)


@dataclass(frozen=True)
class DatedRule:
    """A rule of an engine's builds up to a date: it holds for records dated before ``before`` (empty: always); an
    estimate prices today's build, which a dated rule is not about."""

    __pydantic_config__ = PYDANTIC_CONFIG

    before: str = ""
    """``YYYY-MM-DD``: the rule holds for records dated before it; empty: always"""
    evidence: str = ""

    #: the rule's section in a stack profile, named in its errors
    SECTION: ClassVar[str] = "rule"

    def __post_init__(self) -> None:
        if self.before and not is_iso_date(self.before):
            raise ValueError(f"{self.SECTION}.before: a date as YYYY-MM-DD, got {self.before!r}")

    def dated(self, date: str | None) -> bool:
        """the rule holds for a record of ``date`` (None: an estimate of today's build)"""
        return not self.before or (date is not None and date < self.before)


@dataclass(frozen=True)
class SharedKvRule(DatedRule):
    """The engine keeps one KV buffer for all the sequences of a step (llama.cpp's unified cache): each query scores
    every cell in use, its own sequence's and the others' (masked after), so B sequences score B times the keys
    they would alone (:func:`roofline.calc.ops.attention`'s ``shared_kv``). Dated: builds whose cache was always
    shared."""

    SECTION: ClassVar[str] = "shared_kv"

    def holds(self, date: str | None) -> bool:
        """the rule holds for a record of ``date`` (None: an estimate of today's build)"""
        return self.dated(date)


@dataclass(frozen=True)
class UnfusedAttentionRule(DatedRule):
    """The engine runs a decoder's attention unfused unless told otherwise (llama.cpp without flash attention): its
    scores go through memory and every pair of the cells in view is scored
    (:attr:`~roofline.spec.vocab.AttentionForm.UNFUSED`). Dated: builds that fused attention only when asked."""

    SECTION: ClassVar[str] = "unfused_attention"

    def holds(self, date: str | None, flash_attention: bool | None = None) -> bool:
        """a run of ``date`` (None: an estimate of today's build) ran attention unfused: as its record says
        (``flash_attention``), else as its build's default"""
        if flash_attention is not None:
            return not flash_attention
        return self.dated(date)


def attention_form(rule: UnfusedAttentionRule | None, date: str | None, flash_attention: bool | None = None
                   ) -> AttentionForm:
    """How a run computed attention: unfused where its stack's ``rule`` holds at the run's ``date`` or its record
    says flash attention was off (``flash_attention``); fused otherwise (an estimate: ``date`` None)."""
    if rule is not None and rule.holds(date, flash_attention):
        return AttentionForm.UNFUSED
    return AttentionForm.FUSED


@dataclass(frozen=True)
class BarrierRule:
    """The engine's graph ends each node with a spin barrier over its threads: ``rounds_per_layer`` rounds of atomic
    updates of one shared line per transformer layer, counted from its source (:mod:`roofline.calc.barriers`)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    rounds_per_layer: float
    evidence: str = ""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rounds_per_layer) and 0 <= self.rounds_per_layer <= 10_000):
            raise ValueError(f"barriers.rounds_per_layer: 0 to 10,000 rounds, got {self.rounds_per_layer}")


@dataclass(frozen=True)
class DispatchRule:
    """The engine's own cost per call and per GEMM launch, measured (a graph's build and walk, a node's dispatch):
    held in the fit, not fitted (a fit left free puts there whatever else the figures miss). ``evidence`` says
    where it was measured and how."""

    __pydantic_config__ = PYDANTIC_CONFIG

    call_s: float
    per_op_s: float
    evidence: str = ""

    def __post_init__(self) -> None:
        for what, v in (("call_s", self.call_s), ("per_op_s", self.per_op_s)):
            if not (math.isfinite(v) and 0 <= v <= 1.0):
                raise ValueError(f"dispatch.{what}: 0 to 1 second, got {v}")


@dataclass(frozen=True)
class AttentionKernel:
    """One of the engine's fused attention kernels and its cost, measured: a score (one query against one key, in
    one head) takes ``factor`` times the ceiling's arithmetic for it (``4 d`` ops on the FP32 matmul path and the
    softmax's on the vector path, :func:`roofline.calc.ops.attention`), its KV reads inside that time. Held in the
    fit, not fitted. The kernel runs a step whose sequences each bring at least ``min_queries`` queries, in builds
    from ``since`` (an ISO date; empty: every build); ``evidence`` says where it was read and measured."""

    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    factor: float
    min_queries: int = 1
    since: str = ""
    evidence: str = ""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.factor) and 1 <= self.factor <= 1000):
            raise ValueError(f"attention_kernels.factor: 1 to 1,000 times the ceiling's arithmetic, got {self.factor}")
        if not 1 <= self.min_queries <= 1_000_000:
            raise ValueError(f"attention_kernels.min_queries: 1 to 1,000,000, got {self.min_queries}")
        if self.since and not is_iso_date(self.since):
            raise ValueError(f"attention_kernels.since: a date as YYYY-MM-DD, got {self.since!r}")

    def runs(self, queries: float, date: str | None) -> bool:
        """whether it runs a step of ``queries`` queries per sequence in a build of ``date`` (None: today's)"""
        return queries >= self.min_queries and (date is None or not self.since or date >= self.since)


def attention_kernel(kernels: tuple[AttentionKernel, ...], queries: float, date: str | None
                     ) -> AttentionKernel | None:
    """The kernel that runs a fused attention step of ``queries`` queries per sequence in a build of ``date``: of
    those that run it, the one asking the most queries (the most specific); None: no kernel is stated."""
    fits = [k for k in kernels if k.runs(queries, date)]
    return max(fits, key=lambda k: k.min_queries) if fits else None


#: a stack profile fitted on fewer platforms quotes the cross-stack error band
MIN_PLATFORMS = 3
#: the class of a GEMM row a kernel table prices: ``<kernel>-kernels`` (``gemv-kernels``)
KERNEL_CLASS = "kernels"
#: the ISA part of the class of a GGUF row priced by cycles timed on its core (``gguf-timed``)
TIMED_CLASS = "timed"
#: a kernel class's efficiency is the table's counted cycles over the real ones: a loop that retires faster than
#: LLVM's model of the core says (a 512-bit datapath the model still halves) reaches above 1, never this far
KERNEL_MAX = 4.0


def is_kernel_class(cls: str) -> bool:
    """a GEMM row class priced by a kernel table's cycles (:attr:`StackProfile.kernels`)"""
    return cls.endswith("-" + KERNEL_CLASS)


def is_timed_class(cls: str) -> bool:
    """a GEMM row class priced by a kernel table's cycles timed on the core
    (:attr:`~roofline.spec.kernels.CoreCycles.timed`): efficiency 1, never fitted"""
    return cls.endswith("-" + TIMED_CLASS)


@dataclass(frozen=True)
class ClassAccuracy:
    """The leave-one-platform-out error of a stack's figures whose GEMMs run mostly on one compute path class
    (a speedup's: its new precision's)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    median_abs_error: float
    worst_abs_error: float
    figures: int
    platforms: int

    def __post_init__(self) -> None:
        check_median_worst(self.median_abs_error, self.worst_abs_error)
        if not 1 <= self.platforms <= self.figures:
            raise ValueError(f"figures {self.figures}, platforms {self.platforms}: a class's figures ran on 1 to "
                             "that many platforms")


def check_median_worst(median: float, worst: float) -> None:
    """A median and a worst |predicted / measured - 1|, each in its range (``stack.accuracy.abs_error``), the median
    no more than the worst."""
    check("stack.accuracy.abs_error", median, "median_abs_error")
    check("stack.accuracy.abs_error", worst, "worst_abs_error")
    if median > worst:
        raise ValueError(f"median_abs_error {median} is above worst_abs_error {worst}")


@dataclass(frozen=True)
class Accuracy:
    """The realistic estimate's error against the records, each predicted from a profile refitted
    without the record's platform (leave-one-platform-out)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    median_abs_error: float
    """median of |predicted / measured - 1| over the figures"""
    worst_abs_error: float
    figures: int
    records: int
    platforms: int
    command: str
    """the command that measured it"""
    cross_stack_median_abs_error: float | None = None
    """a stack with fewer than :data:`MIN_PLATFORMS` platforms: the leave-one-platform-out median over every
    stack's figures (``roofline accuracy``'s ``all`` group), the band its estimates quote instead of its own"""

    classes: dict[str, ClassAccuracy] = field(default_factory=dict)
    """per compute path class (``<dtype>-<isa class>``): the same error over the figures whose GEMMs run mostly
    on it, so that an estimate on a class the records seldom reach quotes its own band (:meth:`class_band`)"""

    @property
    def band(self) -> float:
        """the error band an estimate quotes: its own median, or the cross-stack one over too few platforms"""
        if self.platforms < MIN_PLATFORMS and self.cross_stack_median_abs_error is not None:
            return self.cross_stack_median_abs_error
        return self.median_abs_error

    def __post_init__(self) -> None:
        check_median_worst(self.median_abs_error, self.worst_abs_error)
        check("stack.accuracy.abs_error", self.cross_stack_median_abs_error, "cross_stack_median_abs_error")

    def class_band(self, cls: str | None) -> tuple[float | None, ClassAccuracy | None]:
        """The band an estimate whose GEMMs run on ``cls`` quotes, and the class's own error where the profile
        has it: the stack's :attr:`band`, or the class's own median where that is wider (a class whose figures
        are predicted worse than the stack's as a whole is not covered by the stack's median). A class no figure
        runs on quotes the cross-stack band where the profile holds one, else none (None): the stack's own band
        was measured on other classes."""
        if not cls or not self.classes:  # no class to look up: the stack's band
            return self.band, None
        c = self.classes.get(cls)
        if c is None:
            return self.cross_stack_median_abs_error, None
        return max(self.band, c.median_abs_error), c


@dataclass(frozen=True)
class FitForm:
    """Which terms a stack's realistic model has: the structure its values are fitted in."""

    __pydantic_config__ = PYDANTIC_CONFIG

    shape: ShapeForm = ShapeForm.WORK
    """the shape term's measure (NONE: left out)"""
    passes: bool = False
    """the other non-GEMM passes' memory time at the memory efficiency (False: each whole pass at ``other``)"""
    factors: bool = False
    """a factor per platform on its cores' efficiencies"""
    call_s: float | None = None
    """the per-call dispatch held at this value (None: fitted or measured)"""

    def __post_init__(self) -> None:
        if self.call_s is not None and not (math.isfinite(self.call_s) and 0 <= self.call_s <= 1):
            raise ValueError(f"call_s: seconds, 0 to 1, got {self.call_s}")

    @property
    def label(self) -> str:
        """a short name: ``shape=work passes factors call=5ms``"""
        words = [f"shape={self.shape.value}"] + ["passes"] * self.passes + ["factors"] * self.factors
        return " ".join(words + ([f"call={self.call_s * 1e3:g}ms"] if self.call_s is not None else []))


@dataclass(frozen=True)
class FormChoice:
    """A stack's form as chosen by prediction (:func:`roofline.fidelity.forms.choose_forms`): on every platform,
    and without each platform, by the other platforms' leave-one-out figures alone (nested: a left-out platform's
    figures never choose its own form)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    chosen: FitForm
    """the form of the profile fitted on every platform"""
    folds: dict[str, FitForm] = field(default_factory=dict)
    """per platform: the form its leave-one-out profile is fitted in"""
    source: str = ""
    """how it was chosen: the command, the candidates and the figures"""

    def without(self, platform: str) -> FitForm:
        """the form of the profile fitted without ``platform`` (a platform added since: :attr:`chosen`)"""
        return self.folds.get(platform, self.chosen)


@dataclass(frozen=True)
class StackProfile:
    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    description: str
    gemm_efficiency: dict[str, Sourced]
    """per compute path class (``<dtype>-<isa class>``, e.g. int8-amx): GEMM compute time at the ceiling over
    the measured one inside a compiled model, at large M"""
    work_half: Sourced
    """the shape term: a GEMM with ``W = M x N x K / instance cores`` multiply-accumulates per core reaches
    ``eta x W / (W + work_half)`` (a small GEMM split over many cores gives each too little work); 0: none (or
    the shape term in time, ``time_half_s``)"""
    time_half_s: Sourced | None = None
    """the shape term in time: a GEMM call whose multiply-accumulates take ``t`` seconds on a core at its path's
    peak (:func:`roofline.model.realistic.mac_seconds`) reaches ``eta x t / (t + time_half_s)``; given only where
    ``work_half`` is 0"""
    memory_efficiency: Sourced | None = None
    """memory-bound GEMMs: the ceiling's memory time over the measured one"""
    pass_memory_efficiency: Sourced | None = None
    """the other non-GEMM passes (norms, activations, residual adds): their memory time at this efficiency and
    their vector work at ``other-<mode>``'s; None: each whole pass at ``other-<mode>``'s"""
    kernel_efficiency: dict[str, Sourced] = field(default_factory=dict)
    """per class: the same for one linear compiled and called on its own"""
    non_gemm_efficiency: dict[str, Sourced] = field(default_factory=dict)
    """per part and mode (attention-fp32, other-amp-bf16, ...)"""
    cross_stack_gemm_efficiency: dict[str, Sourced] = field(default_factory=dict)
    """a profile fitted on fewer than :data:`MIN_PLATFORMS` platforms: for each class its records never use (and
    some well-founded stack's do), the geometric mean of the well-founded stacks' GEMM efficiency for it, which
    an estimate takes when no class of the profile runs on the same units (:func:`roofline.model.efficiency.lookup`)"""
    quantization_efficiency: Sourced | None = None
    call_s: Sourced | None = None
    per_op_s: Sourced | None = None
    platform_factors: dict[str, Sourced] = field(default_factory=dict)
    """per platform of the records: how much faster (> 1) or slower its cores ran than the classes say (its
    real clock against the datasheet's, a VM's share of the host); applied when that platform is estimated,
    and their geometric mean (:func:`typical_factor`) for any other"""
    path_rules: tuple[PathRule, ...] = ()
    kernels: str = ""
    """the engine's kernel table (``platforms/kernels/<name>.toml``) whose counted cycles price its GGUF GEMMs on a
    core the table knows: such a row's class is the kernel that runs it (``vec_dot-kernels``, ``gemm-kernels``, ...,
    :data:`KERNEL_CLASS`), its efficiency the table's cycles over the real ones (up to :data:`KERNEL_MAX`); empty:
    none, every row priced from the ceiling"""
    shared_kv: SharedKvRule | None = None
    """the engine's KV cache is one buffer all a step's sequences share (records dated before ``before``)"""
    barriers: BarrierRule | None = None
    """the engine's graph's thread barriers, counted per layer (None: none priced; the dispatch fit holds them).
    Kept as it is by ``calibrate``"""
    unfused_attention: UnfusedAttentionRule | None = None
    """when the engine runs attention unfused (None: always fused)"""
    dispatch: DispatchRule | None = None
    """the engine's dispatch per call and per GEMM launch, measured (None: fitted, or from validate reports). Kept as
    it is by ``calibrate``"""
    attention_kernels: tuple[AttentionKernel, ...] = ()
    """the engine's fused attention kernels, each with its measured cost per score (a step one runs is priced so, the
    ``attention-<mode>`` efficiency left to the others: unfused attention, a step no kernel is stated for). Kept as
    it is by ``calibrate``"""
    max_batch_tokens: Sourced | None = None
    """the batching of the stack's own serving harness, as its Server records state it: tokens per batch at most
    (a plan with this profile batches so unless told otherwise)"""
    batch_watermark_tokens: Sourced | None = None
    """the same harness closes a batch once it holds this many tokens"""
    mla: MlaRule | None = None
    """the form the stack runs multi-head latent attention in (naive or absorbed), with its source; None: not
    stated (:data:`roofline.spec.mla.DEFAULT_MLA`, absorbed, assumed). Kept as it is by ``calibrate``"""
    records: tuple[str, ...] = ()
    """the records the values were fitted from"""
    accuracy: Accuracy | None = None
    forms: FormChoice | None = None
    """the form its values are fitted in, chosen by prediction on every platform and without each (None: chosen
    when ``roofline accuracy`` runs)"""
    schema_version: int = SCHEMA_VERSION
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.schema_version > SCHEMA_VERSION:
            raise ValueError(f"schema_version: {self.schema_version} is newer than this roofline reads "
                             f"({SCHEMA_VERSION}); upgrade roofline")
        for group in ("gemm_efficiency", "kernel_efficiency", "non_gemm_efficiency", "cross_stack_gemm_efficiency"):
            for k, v in getattr(self, group).items():
                most = KERNEL_MAX if is_kernel_class(k) else 1.0
                if not v.known or not 0 < v.value <= most:
                    raise ValueError(f"{group}.{k}: an efficiency in (0, {most:g}], got {v.value}")
        for name in ("memory_efficiency", "pass_memory_efficiency", "quantization_efficiency"):
            v = getattr(self, name)
            if v is not None and not (v.known and 0 < v.value <= 1):
                raise ValueError(f"{name}: an efficiency in (0, 1], got {v.value}")
        if not (self.work_half.known and 0 <= self.work_half.known_value <= 1e9):
            raise ValueError(f"work_half: multiply-accumulates per core, 0 to 1e9, got {self.work_half.value}")
        if self.time_half_s is not None:
            if not (self.time_half_s.known and 0 <= self.time_half_s.known_value <= 1):
                raise ValueError(f"time_half_s: seconds, 0 to 1, got {self.time_half_s.value}")
            if self.work_half.value:
                raise ValueError("time_half_s: the shape term in time or in work (work_half), not both; set "
                                 "work_half to 0")
        for name in ("call_s", "per_op_s"):
            v = getattr(self, name)
            if v is not None and not (v.known and 0 <= v.value <= 1):
                raise ValueError(f"{name}: seconds, 0 to 1")
        for k, v in self.platform_factors.items():
            if not (v.known and 0.01 <= v.known_value <= 100):
                raise ValueError(f"platform_factors.{k}: a factor from 0.01 to 100, got {v.value}")
        cap, wm = self.max_batch_tokens, self.batch_watermark_tokens
        for name, v in (("max_batch_tokens", cap), ("batch_watermark_tokens", wm)):
            if v is not None and not (v.known and math.isfinite(v.known_value)
                                      and v.known_value == int(v.known_value)):
                raise ValueError(f"{name}: a whole number of tokens, got {v.value}")
            check_sourced(f"stack.{name}", v, name)
        if wm is not None and (cap is None or wm.known_value > cap.known_value):
            raise ValueError("batch_watermark_tokens: needs max_batch_tokens beside it, at least as large")

    @property
    def shape(self) -> tuple[ShapeForm, float]:
        """the shape term's measure and its half-efficiency value (multiply-accumulates per core, or seconds)"""
        if self.time_half_s is not None and self.time_half_s.known_value > 0:
            return ShapeForm.TIME, self.time_half_s.known_value
        work_half = self.work_half.known_value
        return (ShapeForm.WORK, work_half) if work_half > 0 else (ShapeForm.NONE, 0.0)

    def path_rule(self, vendor: str, dtype: str) -> PathRule | None:
        """The first rule for ``dtype`` on ``vendor``'s CPUs that names no types (the path the stack runs)."""
        return next((r for r in self._rules(vendor, dtype) if not r.types and not r.emulated
                     and r.one_row_serial is None and r.dtype), None)

    def serial_rule(self, vendor: str, dtype: str) -> PathRule | None:
        """The first rule giving the one-row calls' serial share for ``dtype`` (or every dtype) on ``vendor``'s CPUs."""
        return next((r for r in self._rules(vendor, dtype) if r.one_row_serial is not None), None)

    def emulated_rule(self, vendor: str, dtype: str) -> PathRule | None:
        """The first rule saying the stack runs ``dtype``'s emulated path on ``vendor``'s CPUs without a native one."""
        return next((r for r in self._rules(vendor, dtype) if r.emulated), None)

    def chain_rule(self, vendor: str, dtype: str, block: str) -> PathRule | None:
        """The first rule for ``dtype`` on ``vendor``'s CPUs that names GGUF type ``block`` with a rate limit."""
        return next((r for r in self._rules(vendor, dtype) if block in r.types and r.chain_ops_per_cycle), None)

    def unpack_rule(self, vendor: str, dtype: str, block: str, date: str | None) -> PathRule | None:
        """The first rule for ``dtype`` on ``vendor``'s CPUs saying GGUF type ``block``'s kernel unpacks per
        activation row in a build of ``date`` (a record's date; None: an estimate, today's build)."""
        return next((r for r in self._rules(vendor, dtype) if block in r.types and r.unpack_per_row
                     and (not r.before or (date is not None and date < r.before))), None)

    def _rules(self, vendor: str, dtype: str) -> Iterator[PathRule]:
        v = vendor.lower()
        return (r for r in self.path_rules if r.dtype in (dtype, "") and (r.vendor.lower() in v or v in r.vendor.lower()))


def typical_factor(factors: dict[str, float]) -> float:
    """The platform factor of a CPU the records do not have: the geometric mean of the fitted ones (1 when
    there are none). The factors and the class efficiencies share one scale, which the fit's weak priors
    fix only loosely; the geometric mean is the typical platform on whatever scale the fit chose."""
    values = [v for v in factors.values() if v > 0]
    return geometric_mean(values) if values else 1.0
