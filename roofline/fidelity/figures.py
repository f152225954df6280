"""A measurement record's figures, each with the steps the model predicts it from.

A figure (a latency, a speedup, a rate, ...) becomes one step (two for a ratio: baseline, then the
precision), each step its :class:`~roofline.model.realistic.StepParts` with the efficiencies left
out, plus what the efficiencies are looked up by: each GEMM row's compute path class and path-rule
factor, whether the GEMMs sit in a compiled graph, the non-GEMM mode.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from roofline.calc.shapes import GemmList
from roofline.catalog import load_model, load_platform
from roofline.catalog.records import LoadedRecord
from roofline.errors import SpecError, UnknownNameError
from roofline.model.build import CeilingSpec, LayoutSpec, StepOptions
from roofline.model.efficiency import attention_kernel_factors, attention_path, rows_under_rules
from roofline.model.estimate import EstimateQuery, evaluate
from roofline.model.harness import encoder_run, shape_run
from roofline.model.realistic import StepParts, with_attention_kernel, with_barriers
from roofline.model.resources import Resources
from roofline.model.workload import WorkloadSpec
from roofline.spec.platform import with_memory_channels
from roofline.spec.precision import PrecisionRecipe, variant_recipe
from roofline.spec.sourced import Sourced
from roofline.spec.stack import (
    AttentionKernel,
    BarrierRule,
    PathRule,
    SharedKvRule,
    StackProfile,
    UnfusedAttentionRule,
    attention_form,
)
from roofline.spec.vocab import AttentionForm, Ceiling, FigureKind, NonGemmMode, Phase, Scenario


@dataclass(frozen=True)
class FigureStep:
    """One step a figure is predicted from."""

    parts: StepParts
    classes: tuple[str, ...]
    """each GEMM row's compute path class (``<dtype>-<isa class>``; a one-row call's where the row has one
    activation row)"""
    rows: np.ndarray
    """each GEMM row's activation rows (inf: many, as in a validate run's steps)"""
    floors: tuple[str, ...]
    """each GEMM row's one-row class: its time is never less than one row's at that class's value
    (:func:`~roofline.model.efficiency.one_row_floor`; the row's own class where it has one row)"""
    factor: np.ndarray
    """each row's path-rule peak ratio (1 unless the stack runs a slower path than the ceiling's)"""
    limit: np.ndarray
    """each row's rate limit over the ceiling's path peak (1 unless a path rule caps its type's kernel:
    :func:`~roofline.model.efficiency.chain_limit`)"""
    unpack: np.ndarray
    """each row's activation rows its unpacking is repeated for (1 unless a path rule says the type's kernel in
    the record's build unpacks per row: :func:`~roofline.model.efficiency.unpack_rows`)"""
    serial: np.ndarray
    """each row's one-row serial share (0 unless a path rule says the stack's GEMVs do not overlap their weight
    stream and compute: :func:`~roofline.model.efficiency.one_row_serial`)"""
    graph: bool
    mode: NonGemmMode
    attention_path: float = 1.0
    """the attention matmuls' rate over the ceiling's matmul path (:func:`~roofline.model.efficiency.attention_path`)"""
    kernel_s: np.ndarray | None = None
    """each GEMM row's call at the stack's kernel table's cycles (NaN: a row the table does not price; None: none
    is), :func:`~roofline.model.efficiency.kernel_row`"""
    kernel_serial: np.ndarray | None = None
    """each GEMM row's share of its weights' stream at the cores' own bandwidth that adds to its kernel
    (:attr:`~roofline.model.efficiency.KernelRow.serial`; 0: overlapped); None: no row is priced by a kernel table"""


@dataclass(frozen=True)
class Figure:
    record: str
    platform: str
    stack: str
    kind: FigureKind
    precision: str
    baseline: str | None
    label: str
    measured: float
    steps: tuple[FigureStep, ...]
    """one step (latency, gemm, throughput, ...) or two (baseline, new: speedups)"""
    batch: int = 1
    tokens: float = 1.0
    """tokens per step (tokens_per_s figures)"""
    phase: Phase = Phase.FORWARD
    scenario: Scenario | None = None
    """an MLPerf record's scenario (a server figure is a plan's prediction, not a step's)"""
    reported_violation: bool = False
    """the validate report it comes from found it above that run's own ceiling"""
    repeat_spread: float = 0.0
    """how far the same command's runs in the source disagree: max / min - 1 (0: one run stated)"""

    @property
    def parts(self) -> tuple[FigureStep, ...]:
        return self.steps

    @property
    def path_class(self) -> str | None:
        """the compute path class most of its GEMM rows run on (a speedup's: its new precision's step's; a tie:
        the first row's), what :attr:`~roofline.spec.stack.Accuracy.classes` groups it by"""
        classes = self.steps[-1].classes if self.steps else ()
        return max(dict.fromkeys(classes), key=classes.count) if classes else None


def figures(rec: LoadedRecord, rules: tuple[PathRule, ...] = (), ceiling: Ceiling = Ceiling.ATTAINABLE,
            kernels: str = "", shared_kv: SharedKvRule | None = None,
            barriers: BarrierRule | None = None, unfused_attention: UnfusedAttentionRule | None = None,
            attention_kernels: tuple[AttentionKernel, ...] = ()) -> list[Figure]:
    """Every measured figure of a record, with the steps the model predicts it from at ``ceiling`` (``rules``,
    ``kernels``, ``shared_kv``, ``barriers``, ``unfused_attention`` and ``attention_kernels``: its stack profile's
    path rules, kernel table, KV-cache rule, barrier count, attention rule and measured attention kernels)."""
    r = rec.record
    try:
        platform = load_platform(r.platform.name)
    except UnknownNameError as e:
        raise SpecError(str(rec.path), "platform.name", str(e)) from None
    if r.platform.memory_channels is not None:
        try:
            platform = with_memory_channels(platform, r.platform.memory_channels)
        except ValueError as e:
            raise SpecError(str(rec.path), "platform.memory_channels", str(e)) from None
    try:
        spec = load_model(r.model)
    except UnknownNameError as e:
        raise SpecError(str(rec.path), "model", str(e)) from None
    spec = dataclasses.replace(spec, num_hidden_layers=r.layers or spec.num_hidden_layers, measured=())
    stack = StackProfile(name="rules", description="", gemm_efficiency={}, work_half=Sourced(value=0, kind="assumed",
                         source="-"), path_rules=tuple(rules), kernels=kernels, shared_kv=shared_kv,
                         barriers=barriers, unfused_attention=unfused_attention,
                         attention_kernels=tuple(attention_kernels))
    out = []
    cache: dict[tuple, tuple[FigureStep, ...]] = {}
    for m in rec.measurements:
        key = (m.kind, m.precision, m.baseline, m.non_gemm_mode, m.m, m.n, m.k, m.phase, m.seq_len, m.context,
               m.kv_dtype, m.batch)
        if key not in cache:
            cache[key] = _steps_for(r, platform, spec, m, stack, ceiling)
        kind = FigureKind(m.kind)
        label = (f"{m.name} {m.m}x{m.n}x{m.k}" if kind is FigureKind.GEMM else m.name if m.name else
                 f"{m.kind.replace('_', ' ')} vs {m.baseline}" if m.baseline else m.kind)
        phase = Phase(m.phase or r.phase or (Phase.FORWARD if spec.family == "encoder" else Phase.PREFILL))
        batch = m.batch or r.batch
        tokens = batch * (1 if phase is Phase.DECODE else (m.seq_len or r.seq_len))
        out.append(Figure(rec.id, r.platform.name, r.stack, kind, m.precision, m.baseline, label, m.value,
                          cache[key], batch, tokens, phase, r.scenario, reported_violation=m.ceiling_violation,
                          repeat_spread=max((m.value, *m.repeats)) / min((m.value, *m.repeats)) - 1))
    return out


def kv_span(r, m, rule: SharedKvRule | None, form: AttentionForm = AttentionForm.UNFUSED) -> float:
    """The cells each query scores over its own sequence's, for a figure whose engine's KV buffer all ``B``
    sequences share (``rule`` holds at the record's date; 1 otherwise): ``B`` with a prompt per sequence; with one
    prompt of ``P`` tokens all share (``shared_prompt``, llama-batched-bench ``-pps``) and ``t`` tokens of its own on
    average, ``(P + B t) / (P + t)``. A fused attention (``form``) skips the cells its mask hides, the other
    sequences' (llama.cpp's CPU flash attention: ``if (mv == -INFINITY) continue;`` per cell, and a whole tile
    skipped where every cell is masked, ggml/src/ggml-cpu/ops.cpp lines 8968-8971 and 9229-9245 at 0c1e570): 1.

    A prefill of ``B`` prompts runs them one after another (a shared buffer's micro-batches are consecutive tokens,
    ``split_simple``), so the ``i``-th prompt sees the cells of the ``i`` before it and its own: ``(B + 1) / 2`` on
    average, not ``B``."""
    b = m.batch or r.batch
    if rule is None or b <= 1 or not rule.holds(r.date or None) or form is AttentionForm.FUSED:
        return 1.0
    if not r.shared_prompt:
        return (b + 1) / 2 if (m.phase or r.phase) == Phase.PREFILL else float(b)
    prompt = m.seq_len or r.seq_len
    context = m.context if m.context is not None else r.context
    own = max((context or prompt) - prompt, 0)
    return (prompt + b * own) / (prompt + own) if prompt + own else 1.0


def _steps_for(r, platform, spec, m, stack: StackProfile, ceiling: Ceiling) -> tuple[FigureStep, ...]:
    cores = r.platform.cores
    kind = FigureKind(m.kind)
    if kind in (FigureKind.LATENCY, FigureKind.GEMM) and r.platform.instance_cores is None and r.split == 1 \
            and (m.phase or r.phase) not in (Phase.PREFILL, Phase.DECODE):
        # a single process on every core used (validate's harness)
        if kind is FigureKind.GEMM:
            h = shape_run(platform, m.precision, m.name or "gemm", m.m, m.n, m.k, cores=cores,
                          sockets=r.platform.sockets, ceiling=ceiling)
        else:
            h = encoder_run(platform, spec, m.precision, spec.num_hidden_layers, r.batch, r.seq_len,
                            NonGemmMode(m.non_gemm_mode or variant_recipe(m.precision).non_gemm_mode),
                            cores=cores, embeddings=r.embeddings, ceiling=ceiling, sockets=r.platform.sockets)
        return (_figure_step(h.res, h.built.cells, h.built.parts, h.mode, h.graph, stack, threads=r.threads,
                             layers=spec.num_hidden_layers),)
    names = [m.baseline, m.precision] if m.baseline else [m.precision]
    phase = m.phase or r.phase
    context = m.context if m.context is not None else r.context
    if phase not in (Phase.DECODE, Phase.PREFILL) and context:
        raise SpecError(r.source, "context", f"{context} tokens in the cache before a {phase or 'forward'} step: "
                        "only a decoder's steps read a KV cache; exclude the record")
    instance_cores = r.figure_instance_cores(kind is FigureKind.TOKENS_PER_S, int(platform.cores_per_socket.value))
    form = attention_form(stack.unfused_attention, r.date or None, r.flash_attention)
    ev = evaluate(platform, spec, EstimateQuery(
        precisions=names, baseline=names[0],
        workload=WorkloadSpec(phase=phase, batch=m.batch or r.batch, seq_len=m.seq_len or r.seq_len, context=context,
                              shared_kv=kv_span(r, m, stack.shared_kv, form), attention_form=form),
        layout=LayoutSpec(sockets=r.platform.sockets, cores=cores, instance_cores=instance_cores,
                          tensor_parallel=r.split),
        ceiling=CeilingSpec(ceiling=ceiling),
        options=StepOptions(kv_dtype=m.kv_dtype, quantize_lm_head=r.quantize_lm_head,
                            lm_head_precision=r.lm_head_precision)))
    factor, kernel = attention_kernel_factors(stack, spec, phase, m.seq_len or r.seq_len, form, r.date or None)
    return tuple(_figure_step(ev.res, e.cells, with_attention_kernel(e.parts, factor, kernel), e.mode, True, stack,
                              ev.gemms.m, r.date or None, ev.gemms, r.threads, spec.num_hidden_layers)
                 for e in ev.evaluated)


def _figure_step(res: Resources, cells: list[PrecisionRecipe], parts: StepParts, mode: NonGemmMode, graph: bool,
                 stack: StackProfile, m: np.ndarray | None = None, date: str | None = None,
                 gemms: GemmList | None = None, threads: int | None = None, layers: int = 0) -> FigureStep:
    """``m``: the rows' M (None: many rows each, none unpacked again); ``date``: the record's, the build's it ran;
    ``gemms``: the rows' shapes (a kernel table prices the rows it has cycles for); ``threads``: the record's threads
    per process (None: one per core of an instance), each one arrival at every barrier of the ``layers``."""
    if stack.barriers is not None:  # the engine's graph's barriers over the record's threads (counted)
        parts = with_barriers(parts, res, stack.barriers.rounds_per_layer, layers, threads)
    rules = rows_under_rules(res, cells, stack, None if m is None else np.asarray(m, dtype=float), date, gemms)
    rows = np.full(len(cells), np.inf) if m is None else np.asarray(m, dtype=float).reshape(len(cells))
    kernels = [r.kernel for r in rules]
    classes = tuple(k.cls if k is not None else r.one if n <= 1 else r.many for r, k, n in zip(rules, kernels, rows))
    floors = tuple(c if k is not None else r.one for r, k, c in zip(rules, kernels, classes))
    serial = np.array([0.0 if k is not None else r.serial for r, k in zip(rules, kernels)])
    priced = any(k is not None for k in kernels)
    kernel_s = (np.array([float(np.ravel(k.seconds)[0]) if k is not None else np.nan for k in kernels])
                if priced else None)
    kernel_serial = (np.array([float(np.ravel(k.serial)[0]) if k is not None else 0.0 for k in kernels])
                     if priced else None)
    return FigureStep(parts, classes, rows, floors, np.array([r.factor for r in rules]),
                      np.array([r.limit for r in rules]), np.array([float(np.ravel(r.unpack)[0]) for r in rules]),
                      serial, graph, mode, attention_path(res, mode, stack)[0], kernel_s, kernel_serial)
