"""``roofline estimate``: platform + model + workload + precisions -> :class:`EstimateResult`.

The arithmetic is in :mod:`roofline.calc` and the step evaluator (:mod:`roofline.model.step`);
the realistic time in :mod:`roofline.model.realistic`. This module picks the inputs (layout,
memory model, recipes per GEMM, Amdahl inputs), evaluates one step per precision, and records
where every input came from.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from roofline.calc.amdahl import amdahl
from roofline.calc.levels import LEVELS
from roofline.calc.shapes import GemmList
from roofline.errors import UserError
from roofline.files.reading import shown_path
from roofline.model.amdahl import (
    Overrides,
    Resolved,
    find_measured,
    resolve_f_gemm,
    resolve_gemm_speedup,
    resolve_non_gemm_speedup,
)
from roofline.model.build import BuiltStep, CeilingSpec, LayoutSpec, StepOptions, Steps, build_steps, kv_dtype
from roofline.model.efficiency import (
    NO_EFFICIENCIES,
    EfficiencySource,
    applied_rules,
    attention_rule,
    gguf_type,
    kernel_priced,
    path_classes,
    takes_cross,
)
from roofline.model.paths import path_peak
from roofline.model.realistic import Realistic, TermName, realistic_speedup
from roofline.model.resources import Resources
from roofline.model.step import BOUNDS
from roofline.model.workload import Workload, WorkloadSpec, op_cost_names
from roofline.results.estimate import (
    ComputePathResult,
    DecodeResult,
    ErrorBand,
    EstimateResult,
    GemmResult,
    InstanceLayout,
    LeftOut,
    OverheadResult,
    PlatformResult,
    PrecisionResult,
    SpeedupResult,
    WorkloadResult,
)
from roofline.results.provenance import Provenance
from roofline.spec.model import ModelSpec
from roofline.spec.op_costs import OP_COSTS
from roofline.spec.platform import INT8_DOT_FLAGS, Platform
from roofline.spec.precision import MIX_NAMES, RECIPES, PrecisionRecipe
from roofline.spec.sourced import bare_values
from roofline.spec.stack import StackProfile
from roofline.spec.vocab import Ceiling, MemoryModel, Phase, TierUse
from roofline.units import DTYPE_BYTES
from roofline.version import __version__

if TYPE_CHECKING:
    from roofline.spec.mla import MlaRule

COMMON_LEFT_OUT = [
    LeftOut(what="bias and other GEMM epilogues", why="assumed fused into the GEMM (oneDNN post-ops)"),
    LeftOut(what="quantization overheads outside the GEMM kernel (activation quantize/dequantize, scale search, "
                 "smoothing, u8 compensation, unfused post-ops)",
            why="not part of the ceiling (what an ideal quantized kernel allows); priced separately as the named "
                "terms of the realistic estimate"),
    LeftOut(what="framework and dispatch overhead, layout copies",
            why="not in the modelled non-GEMM time, which is therefore a lower bound"),
]
ENCODER_LEFT_OUT = [LeftOut(what="pooler and classifier GEMMs",
                            why="run once per request on one row; negligible, as in the reference paper")]
DECODER_LEFT_OUT = [LeftOut(what="rotary embeddings, q/k norms, sampling",
                            why="small elementwise work next to the projections")]


S8_WITHOUT_VNNI = LeftOut(
    what="the per-call cost of an INT8 linear on s8 activations on a CPU without VNNI (torchao's INT8 configs send "
         "s8 activations to oneDNN)",
    why="oneDNN pays on every such call a time set by the weights, nearly the same at M = 64 to 1,024 (6-13 ms per "
        "4.2 M weights on a 2-vCPU Zen 3 guest, where the u8 kernel does without: "
        "validation/results/zen3-2vcpu-int8-s8-vs-u8.txt; PT2E's X86InductorQuantizer sends u8 activations, and ran "
        "BERT-base's linears 1.5x faster there: validation/results/zen3-2vcpu-pt2e-bert-base.txt); not counted "
        "here, it is in the torch-inductor profile's int8-avx2 efficiency, fitted on that one platform")


#: a kernel table's serial kernels on a platform without a per-core read bandwidth
CORE_STREAM_LEFT_OUT = LeftOut(
    what="each core's own weight stream in the kernels that load their blocks between their arithmetic (the kernel "
         "table's serial_stream: llama.cpp's vec_dot and llamafile's tiles, and those a core's own section lists)",
    why="the platform file gives no per-core DRAM read bandwidth (dram.read_gb_per_s_per_core; `roofline probe` "
        "measures it): those calls are priced as the larger of the kernel and the socket's stream, fast where few "
        "cores run them (on the 2-vCPU Zen 5 guest the larger alone was 41% to 103% fast: formulas.md)")


def serial_kernels_unpriced(res: Resources, recipe: PrecisionRecipe, profile: StackProfile | None, m: float) -> bool:
    """Whether a recipe's calls of ``m`` activation rows run one of a kernel table's serial kernels, whose per-core
    stream the platform cannot price (:data:`CORE_STREAM_LEFT_OUT`)."""
    from roofline.model.efficiency import kernel_row

    if res.platform.dram.read_gb_per_s_per_core.known:
        return False
    row = kernel_row(res, recipe, profile, np.array([float(m)]), 1.0, 1.0)
    return row is not None and bool(np.any(np.asarray(row.serial) > 0))


def left_out(model: ModelSpec, precisions: Sequence[str] = (), isa: Sequence[str] | None = None) -> list[LeftOut]:
    """What the estimate leaves out, the model's own bias vectors named with their size, with ``--precision
    gguf`` the unpacking work of the file's weight types whose layout the tool does not know, and on a platform
    whose ``isa`` has no INT8 dot product the s8 activations' per-call cost (:data:`S8_WITHOUT_VNNI`)."""
    from roofline.model.footprint import bias_params, weight_params
    from roofline.spec.gguf_mix import unpriced_types

    out = COMMON_LEFT_OUT + (ENCODER_LEFT_OUT if model.family == "encoder" else DECODER_LEFT_OUT)
    tensors, params = bias_params(model)
    if params:
        share = params / max(weight_params(model), 1)
        out = [LeftOut(what=f"the model's bias vectors ({params:,} parameters in {tensors:,} tensors, {share:.2%} of "
                            "the weights' parameters) and other GEMM epilogues",
                       why="their reads and adds are assumed fused into the GEMM (oneDNN post-ops); their bytes are "
                           "not in the weight reads"), *out[1:]]
    unknown = unpriced_types(model) if "gguf" in precisions else {}
    if unknown:
        types = ", ".join(f"{k} tensors ({share:.0%} of the weight matrices' weights)" for k, share in unknown.items())
        out = [*out, LeftOut(what=f"unpacking the file's {types}",
                             why="no kernel count for these GGML types: their bytes are priced as stored and their "
                                 "dot products as INT8 on q8_0 activations, without the work of unpacking them "
                                 "(their rows' compute time is a lower bound)")]
    int8_activations = any(p in RECIPES and RECIPES[p].compute_dtype == "int8" and RECIPES[p].x_dtype == "int8"
                           and RECIPES[p].block is None for p in precisions)
    if isa is not None and int8_activations and not INT8_DOT_FLAGS & set(isa):
        out = [*out, S8_WITHOUT_VNNI]
    return out


def model_notes(model: ModelSpec, work: Workload) -> list[str]:
    """What the estimate prices that a dense transformer would not have: a sliding window."""
    if model.sliding_window is None:
        return []
    n, w = model.windowed_layers, model.sliding_window
    where = "every layer" if n == model.num_hidden_layers else f"{n} of the {model.num_hidden_layers} layers"
    binding = ""
    if work.phase is Phase.DECODE and work.context > w:
        binding = f": at context {work.context:,} they read {w:,} cached tokens each, not {work.context:,}"
    elif work.phase is Phase.PREFILL and work.seq_len > w:
        binding = f": a prompt of {work.seq_len:,} tokens scores each query against at most {w:,} keys there"
    kind = ("chunked local attention (Llama 4), priced as a sliding window of its chunk" if model.chunked_attention
            else "sliding-window attention")
    return [f"{kind} in {where} (window {w:,} tokens; their KV cache holds at most that){binding}"]


def default_precisions(platform: Platform, model: ModelSpec) -> list[str]:
    """Encoders: fp32, bf16 where the platform computes BF16 natively, int8-static.
    Decoders: bf16 (fp32 without native BF16), int8-weight-only, int4-weight-only, int8-dynamic.
    An emulated BF16 path (a probed host without BF16 instructions) is not native: BF16 is left out."""
    native_bf16 = bool(platform.paths_for("bf16"))
    if model.family == "decoder":
        return ["bf16" if native_bf16 else "fp32", "int8-weight-only", "int4-weight-only", "int8-dynamic"]
    return ["fp32", *(["bf16"] if native_bf16 else []), "int8-static"]


def default_baseline(platform: Platform, model: ModelSpec) -> str:
    return "bf16" if model.family == "decoder" and platform.paths_for("bf16") else "fp32"


@dataclass(frozen=True)
class Evaluation:
    """Everything an estimate computed before it is written up: the workload, the resources, each
    precision's step (baseline first) with its realistic time, and the Amdahl inputs of each speedup."""

    steps: Steps
    realistic: list[Realistic]
    amdahl: list[AmdahlInputs]
    source_notes: list[str]
    """what the efficiency source says it applied on this platform (:meth:`EfficiencySource.notes`)"""

    @property
    def work(self) -> Workload:
        work = self.steps.work
        assert isinstance(work, Workload)  # evaluate() builds the steps of a model's workload
        return work

    @property
    def res(self) -> Resources:
        return self.steps.res

    @property
    def gemms(self) -> GemmList:
        return self.steps.gemms

    @property
    def evaluated(self) -> list[BuiltStep]:
        return self.steps.steps


@dataclass(frozen=True)
class AmdahlInputs:
    f: Resolved
    s: Resolved
    s_non: Resolved

    @property
    def ceiling(self) -> float:
        return float(amdahl(self.f.value, self.s.value, self.s_non.value))

    def realistic(self, base: Realistic, new: Realistic) -> float:
        return realistic_speedup(self.f.value, self.s.value, self.s_non.value, base, new)


@dataclass(frozen=True)
class EstimateQuery:
    """What an estimate is asked, besides the platform and the model."""

    precisions: list[str] | None = None
    """default: :func:`default_precisions`"""
    baseline: str | None = None
    """default: :func:`default_baseline`"""
    workload: WorkloadSpec = WorkloadSpec()
    layout: LayoutSpec = LayoutSpec()
    ceiling: CeilingSpec = CeilingSpec()
    options: StepOptions = StepOptions()
    source: EfficiencySource = NO_EFFICIENCIES
    overrides: Overrides = Overrides()


def evaluate(platform: Platform, model: ModelSpec, q: EstimateQuery = EstimateQuery()) -> Evaluation:
    """Evaluate every precision's step and the speedups' Amdahl inputs (the estimate before it is written up)."""
    source_notes = q.source.notes(platform)  # and refuses another platform's calibration, before any work
    work = q.workload.of(model)
    _check_overrides(q.overrides)
    if q.options.kv_dtype is not None and q.options.kv_dtype not in DTYPE_BYTES:
        raise UserError(f"--kv-dtype {q.options.kv_dtype}: one of {', '.join(DTYPE_BYTES)}")
    baseline = q.baseline or default_baseline(platform, model)
    names = list(dict.fromkeys([baseline, *(q.precisions or default_precisions(platform, model))]))
    if model.is_mla:
        rule = _mla_rule(model, q, [n for n in names if n != baseline] or names)
        work = dataclasses.replace(work, mla_form=rule.form)
        source_notes = [*source_notes, f"multi-head latent attention priced in its {rule.form} form ({rule.kind}: "
                                       f"{rule.source})"]
    steps = build_steps(platform, work, names, layout=q.layout, ceiling=q.ceiling, source=q.source, options=q.options)
    realistic = [s.realistic(steps.res) for s in steps]
    return Evaluation(steps, realistic, _amdahl_inputs(platform, model, work, steps, q.overrides), source_notes)


def _mla_rule(model: ModelSpec, q: EstimateQuery, asked: list[str]) -> MlaRule:
    """The multi-head latent attention rule of the stack that prices the first precision asked (its ``mla`` table;
    the default, absorbed and assumed, where it states none)."""
    from roofline.model.recipes import precision_recipe
    from roofline.spec.mla import mla_rule

    recipe = precision_recipe(asked[0], model, q.options.group_size)
    return mla_rule(q.source.for_recipe(recipe).profile)


def _band_value(band: ErrorBand | None) -> float | None:
    return band.realistic_error if band is not None else None


def estimate(platform: Platform, model: ModelSpec, q: EstimateQuery = EstimateQuery(), *,
             platform_file: str = "") -> EstimateResult:
    """The estimate of ``model`` on ``platform``."""
    ev = evaluate(platform, model, q)
    work, res, gemms, layout = ev.work, ev.res, ev.gemms, ev.res.layout
    instances = int(layout.total_instances)
    quantize_lm_head = q.options.quantize_lm_head
    precision_results: dict[str, PrecisionResult] = {}
    bound = _bound_step_times(platform, ev, q)
    needs: dict[str, str] = {}
    stacks: list[str] = []
    core_stream = False
    for e, real in zip(ev.evaluated, ev.realistic):
        r, step = e.recipe, e.step
        src = q.source.for_recipe(r)
        core_stream = core_stream or serial_kernels_unpriced(res, r, src.profile, work.tokens)
        if src.stack_name and src.stack_name not in stacks:
            stacks.append(src.stack_name)
        path = res.path(r.compute_dtype)
        notes = [path.note] if path.note else []
        if bool(step.fits_llc) and res.b_llc is None:
            notes.append(f"weights fit the LLC but {platform.name} gives no LLC bandwidth: DRAM bandwidth used")
        if res.layout.tensor_parallel > 1 and src.profile is not None and src.profile.kernels:
            notes.append(f"{src.profile.name} splits no model over CPU ranks (its --split-mode splits over GPUs): "
                         f"the {res.layout.tensor_parallel}-rank split is priced with its kernels as if it did")
        if model.family == "decoder" and not quantize_lm_head and r.quantized and r.name not in MIX_NAMES:
            notes.append(f"lm_head kept in {e.cells[-1].name} (--quantize-lm-head to quantize it)")
        t_step = float(step.step_time)
        need, capacity, what = _memory(platform, model, work, e, res, q)
        fits = None if capacity is None else need <= capacity
        needs[r.name] = what
        if fits is False:
            assert capacity is not None  # a fit was judged against it
            held = " and its second tier (memory_tiers)" if platform.memory_tiers else ""
            notes.append(f"does not fit: needs {what}, more than the {capacity / 1e9:,.4g} GB of DRAM{held} of the "
                         f"{res.layout.sockets} socket(s) used (dram.capacity_gb): no figure here is reachable")
        if step.tier_share is not None and step.resident_bytes is not None:
            tier = platform.memory_tiers[0]
            notes.append(f"{tier.name} ({tier.use}, {tier.capacity_gb.known_value:g} GB a socket): "
                         f"{float(np.ravel(step.tier_share)[0]):.0%} of the step's "
                         f"{float(np.ravel(step.resident_bytes)[0]) / 1e9:,.4g} GB resident per socket read from it, "
                         "the rest from DRAM (roofline/calc/tiers.py)")
        precision_results[r.name] = PrecisionResult(
            name=r.name, description=r.description, compute_path=path.name, compute_dtype=path.dtype,
            native=path.native, peak_ops_per_s=float(path.peak), element_bytes={"x": r.e_x, "w": r.e_w, "y": r.e_y},
            gemms=[_gemm_result(gemms, e, j) for j in range(len(gemms))],
            aggregate_ops_per_s=float(step.aggregate), gemm_time_s=float(step.gemm_time),
            weight_bytes=float(step.weight_read_bytes), weight_set_bytes=float(step.weight_bytes),
            llc_fraction=float(step.weight_bytes / res.llc_domain),
            llc_resident=bool(step.fits_llc) and res.b_llc is not None, non_gemm_mode=r.non_gemm_mode.value,
            non_gemm_time_s=float(step.non_gemm_time), step_time_s=t_step,
            decode=(_decode(res, work, e, gemms, kv_dtype(r, q.options.kv_dtype)) if work.phase is Phase.DECODE
                    else None),
            notes=notes, levels=step.memory_levels, bound=BOUNDS[int(step.bound)].value,
            realistic_step_time_s=real.realistic_s, instance_latency_s=t_step * instances,
            realistic_instance_latency_s=real.realistic_s * instances,
            throughput_per_s=work.batch / t_step, realistic_throughput_per_s=work.batch / real.realistic_s,
            bound_step_time_s=bound.get(e.name), bound_throughput_per_s=work.batch / bound[e.name] if e.name in bound
            else None,
            memory_bytes=need, fits_memory=fits, error_band=src.error_band(res, r, one_row=work.tokens <= 1),
            stack=src.stack_name,
        )
    too_big = [n for n, pr in precision_results.items() if pr.fits_memory is False]
    base, base_real = ev.evaluated[0], ev.realistic[0]
    speedups = []
    for e, real, a in zip(ev.evaluated[1:], ev.realistic[1:], ev.amdahl):
        t_base = float(base.step.gemm_time) / a.f.value if a.f.value > 0 else float("inf")
        speedups.append(SpeedupResult(
            precision=e.recipe.name, baseline=base.recipe.name, gemm_speedup=a.s.value, gemm_speedup_source=a.s.source,
            f_gemm=a.f.value, f_gemm_source=a.f.source, non_gemm_speedup=a.s_non.value,
            non_gemm_speedup_source=a.s_non.source, end_to_end_ceiling=a.ceiling,
            realistic=a.realistic(base_real, real),
            realistic_error=_band_value(precision_results[e.recipe.name].error_band),
            overheads=[OverheadResult(TermName(t.name).value, t.seconds,
                                      t.seconds / t_base if math.isfinite(t_base) else 0.0, t.how, t.calibrated)
                       for t in real.terms],
        ))
    return EstimateResult(
        tool=f"roofline {__version__}",
        platform=_platform_result(res, shown_path(platform_file) if platform_file else ""),
        workload=WorkloadResult(
            model=model.name, family=model.family, phase=work.phase.value, batch=work.batch, seq_len=work.seq_len,
            m=work.tokens, layers=model.num_hidden_layers, fused_qkv=work.fused_qkv,
            context=work.context if work.phase is Phase.DECODE else None,
        ),
        baseline=base.recipe.name, precisions=precision_results, speedups=speedups,
        inputs=_provenance(res, model, [e.recipe for e in ev.evaluated], q.source.profile,
                           [c for e in ev.evaluated for c in e.cells]),
        left_out=left_out(model, [e.recipe.name for e in ev.evaluated], platform.isa)
        + ([CORE_STREAM_LEFT_OUT] if core_stream else []),
        calibration=q.source.calibration_name if q.source.calibration is not None else None,
        memory_model=res.memory_model.value, ceiling=res.ceiling.value, stack=", ".join(stacks) or None,
        realistic_accuracy=q.source.accuracy,
        notes=ev.source_notes + _emulated_notes(platform, q) + model_notes(model, work) + ([
            f"{', '.join(too_big)}: the model and its KV cache do not fit {platform.name}'s DRAM ({too_big[0]} needs "
            f"{needs[too_big[0]]}); these figures assume memory the platform does not have"] if too_big else []),
    )


def _emulated_notes(platform: Platform, q: EstimateQuery) -> list[str]:
    """What an emulated path (measured by a probe, never priced) does to this estimate."""
    emulated = platform.emulated_paths("bf16")
    if not emulated or platform.paths_for("bf16"):
        return []
    what = f"{platform.name}'s BF16 path ({', '.join(emulated)}) is emulated (no native BF16 instructions)"
    if q.precisions is None:
        return [f"bf16 left out of the default precisions: {what}, not a deployable precision there; "
                "--precision bf16 prices it as autocast to FP32"]
    asked = [*(q.precisions or []), *([q.baseline] if q.baseline else [])]
    stack = q.source.profile
    runs = stack is not None and stack.emulated_rule(platform.vendor, "bf16") is not None
    how = (f"the ceilings price it as autocast to FP32, the realistic estimate on that path ({stack.name} runs it "
           "there)") if runs and stack is not None else "priced as autocast to FP32"
    return [f"bf16: {what}; {how}"] if any(p.startswith("bf16") for p in asked) else []


# ------------------------------------------------------------------------------- pieces


def _bound_step_times(platform: Platform, ev: Evaluation, q: EstimateQuery) -> dict[str, float]:
    """Each precision's step time at the bound (levels model; none in the paper model)."""
    if not ev.res.levels:
        return {}
    if ev.res.ceiling is Ceiling.BOUND:
        return {e.name: float(e.step.step_time) for e in ev.evaluated}
    steps = build_steps(platform, ev.work, [e.name for e in ev.evaluated], layout=q.layout,
                        ceiling=dataclasses.replace(q.ceiling, ceiling=Ceiling.BOUND, bandwidth=None),
                        options=dataclasses.replace(q.options, realistic=False))
    return {e.name: float(e.step.step_time) for e in steps}


def _memory(platform: Platform, model: ModelSpec, work: Workload, e: BuiltStep, res: Resources,
            q: EstimateQuery) -> tuple[float, float | None, str]:
    """DRAM the step needs on the sockets used: one copy of the weights per socket (roofline footprint) and
    every instance's KV cache (decode: its sequences' context; prefill: the prompts written), the DRAM they
    have (None: the platform file gives no dram.capacity_gb), and the need in words."""
    from roofline.model.footprint import footprint

    sockets = int(res.layout.sockets)
    try:
        weights = footprint(model, e.recipe.name, group_size=q.options.group_size,
                            quantize_lm_head=q.options.quantize_lm_head).total_bytes
    except UserError:  # a recipe footprint does not price on its own: the GEMM weights the step reads
        weights = float(e.step.weight_bytes)
    kv = 0.0
    if model.family == "decoder":
        tokens = work.context + 1 if work.phase is Phase.DECODE else work.seq_len
        e_kv = DTYPE_BYTES[kv_dtype(e.recipe, q.options.kv_dtype) or res.non_gemm_peaks(e.recipe.non_gemm_mode)[0]]
        per_sequence = float(model.kv_tokens(tokens)) * model.kv_width * e_kv + work.state_bytes() / work.batch
        kv = float(res.layout.total_instances) * work.batch * per_sequence
    need = weights * sockets + kv
    what = f"{need / 1e9:,.4g} GB ({weights * sockets / 1e9:,.4g} GB of weights" + (
        f" + {kv / 1e9:,.4g} GB of KV cache)" if kv else ")")
    cap = platform.dram.capacity_gb
    total = cap.known_value * 1e9 * sockets if cap.known else None
    tiers = [t for t in platform.memory_tiers if t.use is not TierUse.CACHE]  # a cache holds no pages of its own
    if total is not None and tiers:
        total += sum(t.capacity_gb.known_value for t in tiers) * 1e9 * sockets
    return need, total, what



def _decode(res: Resources, work: Workload, e: BuiltStep, gemms: GemmList, kv_dtype: str | None) -> DecodeResult:
    from roofline.model.decode import compute_bound_batch, step_split

    split = step_split(e.step)
    latency = split.total_s
    kv = kv_dtype or res.non_gemm_peaks(e.recipe.non_gemm_mode)[0]
    return DecodeResult(
        token_latency_s=latency, tokens_per_s=work.batch / latency, bound=split.bound, bound_detail=split.detail(),
        weight_bytes=float(e.step.weight_read_bytes),
        kv_cache_bytes=work.kv_cache_elements() * DTYPE_BYTES[kv] + work.state_bytes(),  # + a linear layer's state
        kv_dtype=kv, compute_bound_batch=compute_bound_batch(
            res, e.cells, gemms, (lambda b: dataclasses.replace(work, batch=b).gemms()[0]) if work.model.is_moe else None),
    )


def _amdahl_inputs(platform: Platform, model: ModelSpec, work: Workload, steps: Steps,
                   overrides: Overrides) -> list[AmdahlInputs]:
    """``f``, ``s`` and ``s_non`` of each precision against the baseline (the first), with their sources."""
    base = steps[0]
    measured = (find_measured(model, platform, base.recipe.name, work.batch, work.seq_len)
                if work.phase is Phase.FORWARD else None)
    g_base, n_base = float(base.step.gemm_time), float(base.step.non_gemm_time)
    f = resolve_f_gemm(measured, overrides.f_gemm, g_base / (g_base + n_base))
    out = []
    for e in steps.steps[1:]:
        ratio = (float(e.step.aggregate / base.step.aggregate) if work.phase is not Phase.DECODE
                 else g_base / float(e.step.gemm_time))
        s = resolve_gemm_speedup(overrides.gemm_speedup, ratio)
        s_non = resolve_non_gemm_speedup(measured, overrides.non_gemm_speedup, base.recipe, e.recipe,
                                         n_base / float(e.step.non_gemm_time))
        out.append(AmdahlInputs(f, s, s_non))
    return out


def _check_overrides(o: Overrides) -> None:
    if o.f_gemm is not None and not 0.0 <= o.f_gemm <= 1.0:
        raise UserError(f"--f-gemm {o.f_gemm}: a fraction of time, between 0 and 1")
    for flag, v in (("--gemm-speedup", o.gemm_speedup), ("--non-gemm-speedup", o.non_gemm_speedup)):
        if v is not None and not v > 0:
            raise UserError(f"{flag} {v}: a speedup is a positive number")


def _gemm_result(gemms: GemmList, e: BuiltStep, j: int) -> GemmResult:
    g = e.step.gemm
    resident = e.step.weight_level.item() != LEVELS.index("DRAM")
    return GemmResult(
        name=gemms.names[j], recipe=e.cells[j].name, m=_whole(gemms.m[j]), n=int(gemms.n[j]),
        k=int(gemms.k[j]), count=_whole(gemms.count[j]),
        flops=float(g.flops[j]), bytes=float(g.nbytes[j]),
        x_bytes=float(g.d_x[j]), w_bytes=float(g.d_w[j]), y_bytes=float(g.d_y[j]),
        arithmetic_intensity=float(g.flops[j] / g.nbytes[j]),
        balance_point=float(g.flops[j] / g.t_compute[j] / g.bandwidth[j]),
        bound="compute" if g.compute_bound[j] else "memory",
        bandwidth_bytes_per_s=float(g.bandwidth[j]),
        bandwidth_kind=("llc-effective" if resident else "dram") if e.step.memory_model is MemoryModel.PAPER else "levels",
        attainable_ops_per_s=float(g.attainable[j]),
        time_s=float(g.count[j] * g.time[j]),
        bound_by=BOUNDS[int(g.bound[j])].value,
        levels={"weights": LEVELS[int(e.step.weight_level)], "activations": LEVELS[int(g.xy_level[j])]},
    )


def _whole(x: float) -> int | float:
    """An integer where the value is whole (expected expert counts and rows are not)."""
    x = float(x)
    return int(x) if x.is_integer() else x


def _platform_result(res: Resources, file: str) -> PlatformResult:
    platform, lay = res.platform, res.layout
    sockets = lay.sockets
    b_l2, b_llc, b_dram = res.bandwidths()
    paths = []
    for name, p in platform.compute.items():
        hz = float(res.clock(p.isa_class))
        peak = float(path_peak(platform, name, sockets, float(lay.active_cores), res.clock))
        paths.append(ComputePathResult(name=name, dtype=p.dtype, isa_class=p.isa_class, frequency_hz=hz,
                                       ops_per_cycle_per_core=p.ops_per_cycle.known_value, peak_ops_per_s=peak,
                                       dram_balance_point=peak / float(b_dram), emulated=p.emulated))
    return PlatformResult(
        name=platform.name, description=platform.description, file=file, sockets_used=sockets,
        cores=int(sockets * lay.active_cores),
        dram_bandwidth_bytes_per_s=float(b_dram), dram_bandwidth_kind=res.dram_kind,
        llc_bytes_per_domain=res.llc_domain, llc_domains=sockets * platform.llc.domains_per_socket,
        llc_read_bytes_per_s=float(res.b_llc) if res.b_llc is not None else None,
        l2_read_bytes_per_s=float(res.b_l2) if res.b_l2 is not None else None,
        compute_paths=paths,
        layout=InstanceLayout(cores_per_instance=int(lay.instance_cores), instances_per_socket=int(lay.instances),
                            cores_per_socket_used=int(lay.active_cores),
                            l2_bytes_per_instance=float(res.l2_capacity),
                            llc_bytes_per_instance=float(res.llc_capacity(0.0)), spans_sockets=lay.spans_sockets,
                            tensor_parallel=lay.tensor_parallel),
    )


def _rule_rows(res: Resources, recipes: list[PrecisionRecipe], stack: StackProfile | None) -> list[Provenance]:
    """The stack profile's path rules the estimate applied (which kernels the stack runs, at what rate), each with
    its evidence: ``derived`` where it states a rate, ``assumed`` where it names a path."""
    if stack is None:
        return []
    used = {}
    for r in recipes:
        for rule in applied_rules(res, r, stack):
            if rule is not None:
                used[stack.path_rules.index(rule)] = rule
        rule = attention_rule(res, r.non_gemm_mode, stack)  # its attention matmuls on a rule's path
        if rule is not None:
            used[stack.path_rules.index(rule)] = rule
    rows = []
    for i, rule in sorted(used.items()):
        said = []
        if rule.isa_class:
            said.append(f"{rule.isa_class} path")
        for rate, why in ((rule.max_ops_per_cycle, ""), (rule.chain_ops_per_cycle, ", a chain")):
            if rate is not None:
                said.append(f"<= {rate:g} ops/cycle/core{why}")
        if rule.attention:
            said.append("attention's matmuls too")
        if rule.unpack_per_row:
            said.append("unpacked again per activation row")
        if rule.emulated:
            said.append(f"the platform's emulated {rule.dtype.upper()} path, at its stated rate (no native one)")
        if rule.one_row_serial is not None:
            said.append(f"one-row calls: weight stream and compute not overlapped (share {rule.one_row_serial:g})")
        rate = (rule.max_ops_per_cycle is not None or rule.chain_ops_per_cycle is not None or rule.unpack_per_row
                or rule.emulated or rule.one_row_serial is not None)
        rows.append(Provenance(what=f"{stack.name}.path_rules[{i}]",
                               value=f"{', '.join(rule.types) or rule.dtype or 'every dtype'}: {'; '.join(said) or 'as the ceiling'}",
                               kind="derived" if rate else "assumed", source=rule.evidence or "-"))
    return rows


def _provenance(res: Resources, model: ModelSpec, recipes: list[PrecisionRecipe],
                stack: StackProfile | None = None, cells: list[PrecisionRecipe] | None = None) -> list[Provenance]:
    """Every platform number and modelling constant the estimate used, with its source (the stack profile's path
    rules that applied to the GEMM rows' ``cells`` among them)."""
    p = res.platform
    used = [("sockets", p.sockets), ("cores_per_socket", p.cores_per_socket)]
    if res.layout.tensor_parallel > 1:
        res.rank_line_s  # noqa: B018 -- the all-reduce flags' line transfer, among the inputs used
    used += [(u.what, u.source) for u in res.provenance()]
    costs = op_cost_names(model)
    for r in recipes:
        if r.compute_dtype == "int8":
            costs += ["quantize_ops_per_element", "compensation_ops_per_output"]
            if r.x_scale == "per-token":
                costs.append("scale_search_ops_per_element")
        if r.dequant_cost:
            costs.append(r.dequant_cost)
    if res.layout.tensor_parallel > 1:
        costs.append("tp_allreduce_bytes_per_element")
    used += [(f"op_costs.{c}", OP_COSTS[c]) for c in dict.fromkeys(costs)]
    cells = cells if cells is not None else recipes
    return [Provenance(what=w, value=f"{s.value:g}", kind=s.kind or "", source=s.source or "")
            for w, s in dict(used).items()] + _rule_rows(res, cells, stack) + _kernel_rows(res, cells, stack) \
        + _cross_rows(res, cells, stack)


def _kernel_rows(res: Resources, recipes: list[PrecisionRecipe], stack: StackProfile | None) -> list[Provenance]:
    """The kernel table's cycles that priced GGUF rows on this CPU's core (:func:`kernel_priced`), one row per type:
    ``measured`` where the table's cycles for the core were timed on it, ``derived`` where counted from the source
    by a scheduling model, ``assumed`` where the core takes another core's cycles; and an ``assumed`` row for each
    type the table does not count on this core (priced at the ceiling's rates and the class's efficiency instead)."""
    from roofline.calc.kernel_cycles import TILED_ROWS
    from roofline.catalog.kernels import load_kernel_table
    from roofline.spec.kernels import Kernel

    if stack is None or not stack.kernels:
        return []
    types = dict.fromkeys(t for r in recipes if kernel_priced(res, r, stack) and (t := gguf_type(r)) is not None)
    table = load_kernel_table(stack.kernels)
    core = res.platform.core
    # a type the table does not count on this core (an i-quant on a core whose rows are measured): said, as its GEMMs
    # are priced from the ceiling instead
    counted = {t for c in table.cycles.values() for t in c.types}
    cycles = table.core_cycles(core)
    here_types = set(cycles.types) if cycles is not None else set()
    unpriced = dict.fromkeys(t for r in recipes if (t := gguf_type(r)) is not None and t not in here_types)
    missing = [Provenance(what=f"{table.engine}.kernels.{t}", value="no cycles in the kernel table", kind="assumed",
                          source=f"platforms/kernels/{stack.kernels}.toml counts no kernel of {t} on "
                          f"{'any core' if t not in counted else core or 'this platform (its core is not named)'}: "
                          "its GEMMs priced at the ceiling's rates times the profile's efficiency for their path class")
               for t in unpriced]
    if not types:
        return missing
    assert cycles is not None  # kernel_priced found them
    alias = table.aliases.get(core) if core not in table.cycles else None
    kind = "assumed" if alias else "measured" if cycles.source.startswith("measured") else "derived"
    why = f"{core} takes {alias}'s cycles (LLVM has no model of its own); " if alias else ""
    # a type today's build runs through its tiled matmul from TILED_ROWS rows, whose cycles the core's rows lack
    untiled = [Provenance(what=f"{table.engine}.kernels.{alias or core}.{t}.tiled", value="no cycles in the kernel table",
                          kind="assumed", source=f"platforms/kernels/{stack.kernels}.toml counts no tiled matmul of {t} "
                          f"on {alias or core}: a call of {TILED_ROWS} activation rows or more, which today's build "
                          "runs through it (each weight tile unpacked once), is priced as that many vec_dot calls, "
                          "slower than the build runs it")
               for t in types if "tiled" not in cycles.types[t]
               and table.rule(t, Kernel.TILED, tuple(res.platform.isa), None) is not None]
    return [Provenance(what=f"{table.engine}.kernels.{alias or core}.{t}",
                       value=", ".join(f"{k} {v:g}" for k, v in cycles.types[t].items()) + " cycles/32 weights",
                       kind=kind, source=why + cycles.source)
            for t in types] + untiled + missing


def _cross_rows(res: Resources, recipes: list[PrecisionRecipe], stack: StackProfile | None) -> list[Provenance]:
    """The cross-stack efficiencies the estimate took for GEMM classes the profile never fitted, with their sources."""
    if stack is None or not stack.cross_stack_gemm_efficiency:
        return []
    table = bare_values(stack.gemm_efficiency)
    cross = bare_values(stack.cross_stack_gemm_efficiency)
    used = [c for r in recipes for c in path_classes(res, r, stack)[:2] if takes_cross(table, c, cross)]
    return [Provenance(what=f"{stack.name}.cross_stack_gemm_efficiency.{c}", value=f"{cross[c]:g}", kind="derived",
                       source=stack.cross_stack_gemm_efficiency[c].source or "-") for c in dict.fromkeys(used)]
