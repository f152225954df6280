"""One step pipeline for every command: workload -> layout and resources -> the recipe of each GEMM
row -> the step roofline -> efficiencies -> the realistic time.

:func:`build_steps` is what estimate, check, plan's service times, sweep, the validate harness and
the stack fit call. It evaluates the precisions of one workload on one platform under one layout,
and broadcasts over a leading axis where one is given: an array of ``instance_cores`` (a plan's
layouts) or arrays of ``batch`` and ``seq_len`` (a sweep's points). A sweep's GEMMs depend on a
point's tokens and sequences only, so each distinct ``(tokens, batch)`` is evaluated once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

import numpy as np

from roofline.calc.ops import Op
from roofline.calc.shapes import GemmList
from roofline.errors import UserError
from roofline.model.efficiency import NO_EFFICIENCIES, EfficiencySource, attention_kernel_factors
from roofline.model.layout import Layout, make_layout
from roofline.model.realistic import (
    Efficiency,
    Realistic,
    StepParts,
    Times,
    describe,
    realistic_times,
    step_parts,
    with_attention_kernel,
    with_barriers,
    with_syncs,
)
from roofline.model.recipes import cell_recipes, precision_recipe
from roofline.model.resources import Resources
from roofline.model.step import OpsEval, StepEval, evaluate_ops, evaluate_step
from roofline.model.workload import LinearWorkload, Workload
from roofline.spec.platform import Platform
from roofline.spec.precision import PrecisionRecipe, variant_recipe
from roofline.spec.vocab import Bandwidth, Ceiling, MemoryModel, NonGemmMode, Phase

AnyWorkload = Union[Workload, LinearWorkload]


@dataclass(frozen=True)
class LayoutSpec:
    """Where the step runs: sockets and cores used (default: all), cores per instance (default: the
    reference paper's 4; an array is one layout per entry), and whether the rest of each socket is busy
    (a loaded server: every core at the all-core clock)."""

    sockets: int | None = None
    cores: int | None = None
    instance_cores: int | np.ndarray | None = None
    socket_busy: bool = False
    tensor_parallel: int = 1
    """ranks one instance of every core used is split over (:mod:`roofline.model.layout`)"""


@dataclass(frozen=True)
class CeilingSpec:
    """How the ceiling is priced: the memory model, which of its two ceilings (the levels model's attainable
    one by default, or the bound), and the bandwidth figures (default: the ceiling's own)."""

    memory_model: MemoryModel = MemoryModel.LEVELS
    bandwidth: Bandwidth | None = None
    ceiling: Ceiling = Ceiling.ATTAINABLE


@dataclass(frozen=True)
class StepOptions:
    """What the step computes beyond its shape."""

    group_size: int | None = None
    """per-group INT4 recipes' group size"""
    kv_dtype: str | None = None
    """the KV cache's element type (default: the activation dtype)"""
    quantize_lm_head: bool = False
    lm_head_precision: str | None = None
    """the lm_head in a precision of its own (a record's ``lm_head_precision``), whatever the step's"""
    non_gemm_mode: NonGemmMode | None = None
    """the non-GEMM work's mode when it is not the recipe's (a validate run's)"""
    graph: bool = True
    """the GEMMs sit in a compiled model (False: one linear compiled and called on its own)"""
    realistic: bool = True
    """price the realistic time too (a sweep prints the ceiling only)"""
    variants: bool = False
    """precisions are validate's variant names (``int8-static-pt2e``: the int8-static recipe)"""


@dataclass(frozen=True)
class BuiltStep:
    """One precision's step: its recipe, the recipe of each GEMM row, the step roofline, and (unless
    ``realistic`` was off) its efficiencies, parts and realistic times."""

    name: str
    """the precision as asked"""
    recipe: PrecisionRecipe
    cells: list[PrecisionRecipe]
    mode: NonGemmMode
    step: StepEval
    eff: Efficiency | None = None
    parts: StepParts | None = None
    times: Times | None = None

    def realistic(self, res: Resources, graph: bool = True, index: int = 0) -> Realistic:
        """The realistic time of step ``index`` (one layout, one point) in named terms."""
        assert self.parts is not None and self.times is not None and self.eff is not None
        return describe(self.parts, self.times, self.recipe, res, self.eff, graph, self.mode, index)


@dataclass(frozen=True)
class Steps:
    """The steps of one workload on one platform, the baseline first."""

    work: AnyWorkload
    res: Resources
    gemms: GemmList
    lm_head: np.ndarray
    m: np.ndarray
    """the rows' M, ``(..., rows)``"""
    steps: list[BuiltStep] = field(default_factory=list)

    @property
    def layout(self) -> Layout:
        return self.res.layout

    def __iter__(self) -> Iterator[BuiltStep]:
        return iter(self.steps)

    def __getitem__(self, i: int) -> BuiltStep:
        return self.steps[i]


#: the KV cache of a GGUF type when none is given: llama.cpp's default (``--cache-type-k/-v f16``)
GGUF_KV_DTYPE = "fp16"


def kv_dtype(recipe: PrecisionRecipe, given: str | None) -> str | None:
    """The KV cache's element type of a step: the one given, else a GGUF type's llama.cpp default
    (:data:`GGUF_KV_DTYPE`), else None (the activation dtype of the step's non-GEMM mode)."""
    if given is not None:
        return given
    from roofline.model.efficiency import is_gguf

    return GGUF_KV_DTYPE if is_gguf(recipe) else None


def build_steps(platform: Platform, work: AnyWorkload, precisions: list[str], *, layout: LayoutSpec = LayoutSpec(),
                ceiling: CeilingSpec = CeilingSpec(), source: EfficiencySource = NO_EFFICIENCIES,
                options: StepOptions = StepOptions(), batch: np.ndarray | None = None,
                seq_len: np.ndarray | None = None) -> Steps:
    """Every precision's step of ``work`` on ``platform`` (module docstring); ``batch`` and ``seq_len``:
    a sweep's points (arrays of one shape), in place of the workload's own batch and length."""
    res = Resources(platform, make_layout(platform, sockets=layout.sockets, cores=layout.cores,
                                          instance_cores=layout.instance_cores, socket_busy=layout.socket_busy,
                                          tensor_parallel=layout.tensor_parallel),
                    ceiling.memory_model, ceiling.bandwidth, ceiling.ceiling)
    gemms, lm_head = work.gemms()
    set_count = work.weight_set_counts(gemms)
    m, ops = gemms.m, work.ops()
    inverse = None
    if batch is not None:
        # a sweep's points: a model's workload, its batches and lengths together
        assert seq_len is not None and isinstance(work, Workload)
        b, s = (np.asarray(a, dtype=float).ravel() for a in np.broadcast_arrays(batch, seq_len))
        ops = work.ops(batch=b, seq_len=s)
        # a point's GEMMs depend on its tokens and sequences alone: each distinct pair is evaluated once
        tokens = b if work.phase is Phase.DECODE else b * s
        key = tokens * (b.max() + 1) + b if lm_head.any() else tokens
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        m_u, count_u = work.rows_at(b[first], s[first], gemms, lm_head)  # (distinct, rows)
        m = m_u[inverse]
    model = getattr(work, "model", None)
    ranks = res.layout.tensor_parallel
    sync: np.ndarray | float = 0.0
    if ranks > 1:  # the split's all-reduces: their bytes and additions a non-GEMM pass, their flags counted
        ops, sync = _with_allreduce(work, res, ops, batch, seq_len)
    out = Steps(work, res, gemms, lm_head, m)
    # precisions whose non-GEMM work runs alike (one mode, one KV dtype) share it
    ops_by_mode: dict[tuple[NonGemmMode, str | None], OpsEval] = {}
    lead = np.shape(b) if batch is not None else np.broadcast_shapes(np.shape(res.layout.instance_cores))
    for name in precisions:
        recipe = variant_recipe(name) if options.variants else precision_recipe(name, model, options.group_size)
        cells = (cell_recipes(recipe, gemms, lm_head, options.quantize_lm_head, model,
                              options.lm_head_precision) if model is not None
                 else [recipe] * len(gemms))
        mode = NonGemmMode(options.non_gemm_mode or recipe.non_gemm_mode)
        kv = kv_dtype(recipe, options.kv_dtype)
        # a platform with a second memory tier prices each precision's ops at its own blended bandwidth
        # (evaluate_step): nothing to share
        if not platform.memory_tiers and (mode, kv) not in ops_by_mode:
            ops_by_mode[mode, kv] = evaluate_ops(res, ops, mode, kv, res.llc_capacity(), lead)
        shared = ops_by_mode.get((mode, kv))
        if inverse is None:
            step = evaluate_step(res, cells, gemms, ops=ops, non_gemm_mode=mode, kv_dtype=kv,
                                 set_count=set_count, ops_eval=shared)
        else:
            step = evaluate_step(res, cells, gemms, m=m_u, count=count_u, ops=ops, non_gemm_mode=mode,
                                 kv_dtype=kv, set_count=set_count, rows=np.ravel(inverse), ops_eval=shared)
        built = BuiltStep(name, recipe, cells, mode, step)
        if options.realistic:
            eff = source.for_recipe(recipe).efficiency(res, name, mode, cells, gemms, None if inverse is None else m)
            parts = with_barriers(step_parts(res, recipe, gemms, step, mode=mode, graph=options.graph,
                                             m=None if inverse is None else m),
                                  res, eff.barrier_rounds, model.num_hidden_layers if model is not None else 0)
            if isinstance(work, Workload):  # the engine's measured attention kernel, where it states one
                factor, kernel = attention_kernel_factors(source.for_recipe(recipe).profile, model, work.phase,
                                                          work.seq_len if batch is None else s, work.attention_form)
                parts = with_attention_kernel(parts, factor, kernel)
            if ranks > 1:
                parts = with_syncs(parts, sync)
            built = BuiltStep(name, recipe, cells, mode, step, eff, parts,
                              realistic_times(parts, eff.rows(parts, options.graph)))
        out.steps.append(built)
    return out


def _with_allreduce(work: AnyWorkload, res: Resources, ops: list[Op], batch: np.ndarray | None,
                    seq_len: np.ndarray | None) -> tuple[list[Op], np.ndarray]:
    """A tensor-parallel step's ops with its all-reduces (:func:`roofline.calc.ops.tp_allreduce`: ``2 L`` of the
    step's tokens x the hidden size in BF16, ``tp_allreduce_bytes_per_element``) and their flag waits
    (:func:`roofline.calc.allreduce.sync_seconds`, at the rank-to-rank line transfer)."""
    from roofline.calc.allreduce import PER_LAYER, sync_seconds
    from roofline.calc.ops import tp_allreduce
    from roofline.spec.op_costs import cost

    if not isinstance(work, Workload):
        raise UserError("--tensor-parallel: a split prices a model's layers; a single GEMM has none to split")
    model = work.model
    b = np.asarray(work.batch if batch is None else batch, dtype=float)
    s = np.asarray(work.seq_len if seq_len is None else seq_len, dtype=float)
    tokens = b if work.phase is Phase.DECODE else b * s
    e = cost("tp_allreduce_bytes_per_element")
    ranks, layers = res.layout.tensor_parallel, model.num_hidden_layers
    op = tp_allreduce(tokens=tokens, hidden=model.hidden_size, layers=layers, ranks=ranks, element_bytes=e)
    size = tokens * model.hidden_size * e
    return [*ops, op], sync_seconds(PER_LAYER * layers, size, ranks, res.rank_line_s)
