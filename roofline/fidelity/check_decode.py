"""``roofline check --phase decode``: a measured decode speedup (tokens/s of one precision over another)
beside the decode ceiling, and the terms that explain the gap, each priced by the step evaluator.

A decode step at small M streams every weight once, so its ceiling is the weight bytes over the
bandwidth (plus the KV cache), and a precision's ceiling speedup is about the ratio of its weight
bytes. Real engines fall short of that for reasons this module names and prices, per step:

- **compute-bound matmul** (``engine_ops_per_cycle``): an engine whose matmul runs scalar or
  unvectorised code is compute-bound at that rate, whatever the weights' size; every precision that
  computes in floats then runs at the same speed (the GEMMs' flops at ``cores x clock x rate``);
- **unfused dequantization** (``dequant="unfused"``): the kernel dequantizes each weight on the vector
  units before the multiply instead of under the memory stream: its ``d N K`` vector ops add to the
  memory time instead of hiding under it;
- **weights widened and written back** (``widen=True``): the engine widens each quantized weight to a
  float copy it writes and reads back: ``2 e_f N K`` more bytes at the weights' memory level;
- **KV-cache traffic** (``kv_dtype``): a cache kept wider than the ceiling's reads the difference;
- **activation quantization**: the per-token quantize of integer GEMM inputs (the realistic model's term);
- **dispatch per token**: one graph call and a launch per GEMM (the stack profile's or calibration's).

Each side (baseline and precision) gets the same engine behaviour; the realistic speedup is the ratio
of the two realistic step times, and the terms are reported in units of the baseline's realistic time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from roofline.calc.levels import level_bandwidth, level_of
from roofline.calc.shapes import GemmList
from roofline.errors import UserError
from roofline.model.build import BuiltStep, CeilingSpec, StepOptions
from roofline.model.efficiency import NO_EFFICIENCIES, EfficiencySource
from roofline.model.estimate import EstimateQuery, evaluate
from roofline.model.realistic import Term, TermName
from roofline.model.resources import Resources
from roofline.model.workload import WorkloadSpec
from roofline.results.check import CheckResult, CheckRow, CheckTerm, Comparison
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.vocab import MemoryModel, Phase
from roofline.units import DTYPE_BYTES

COMPUTE_BOUND = "compute-bound matmul"
UNFUSED = "unfused dequantization"
WIDENED = "weights widened and written back"
KV = "KV-cache traffic"


@dataclass(frozen=True)
class Engine:
    """How the engine runs decode, as far as the ceiling cannot know it."""

    ops_per_cycle: float | None = None
    """the matmul's rate per core when it does not use the vector or matrix units (scalar code: 2)"""
    dequant: str = "fused"
    """fused (under the memory stream, as the ceiling assumes) or unfused (serialised)"""
    widen: bool = False
    """quantized weights widened to a float copy written and read back"""
    kv_dtype: str | None = None
    """the KV cache's element type in the engine (default: the ceiling's)"""

    def __post_init__(self) -> None:
        if self.ops_per_cycle is not None and not 0.01 <= self.ops_per_cycle <= 65536:
            raise UserError(f"--engine-ops-per-cycle {self.ops_per_cycle}: 0.01 to 65,536 ops per cycle per core")
        if self.dequant not in ("fused", "unfused"):
            raise UserError(f"--dequant {self.dequant}: fused or unfused")
        if self.kv_dtype is not None and self.kv_dtype not in DTYPE_BYTES:
            raise UserError(f"--engine-kv-dtype {self.kv_dtype}: one of {', '.join(DTYPE_BYTES)}")


def engine_terms(res: Resources, e: BuiltStep, gemms: GemmList, engine: Engine, kv_elements: float,
                 ceiling_kv: str) -> list[Term]:
    """The terms of one side's decode step under ``engine``, in seconds per step (whole platform)."""
    g, step = e.step.gemm, e.step
    count = np.asarray(g.count, dtype=float)
    elements = gemms.n.astype(float) * gemms.k.astype(float)  # weights per GEMM call
    terms: list[Term] = []
    if engine.ops_per_cycle is not None:
        lay = res.layout
        clock = max(float(np.max(res.clock(c))) for c in res.platform.frequency_ghz)
        peak = lay.sockets * float(lay.active_cores) * clock * engine.ops_per_cycle
        t_engine = count * np.maximum(g.flops / peak, g.t_memory)
        t_ceiling = count * np.maximum(g.t_compute, g.t_memory)
        extra = float((t_engine - t_ceiling).clip(min=0).sum())
        terms.append(Term(COMPUTE_BOUND, extra, f"the matmul at {engine.ops_per_cycle:g} ops/cycle/core "  # type: ignore[arg-type]
                          f"({peak / 1e9:.3g} Gops/s), not on the vector or matrix units"))
    deq = np.array([c.dequant_ops_per_weight for c in e.cells])
    if engine.dequant == "unfused" and deq.any():
        t = float((count * deq * elements).sum() / float(np.max(res.vector_peak)))
        terms.append(Term(UNFUSED, t, "each weight dequantized on the vector units before the multiply, not under "  # type: ignore[arg-type]
                          "the memory stream"))
    quantized = np.array([c.quantized for c in e.cells])
    if engine.widen and quantized.any():
        e_f = DTYPE_BYTES["fp32" if e.recipe.compute_dtype == "fp32" else "bf16"]
        nbytes = 2.0 * e_f * elements * quantized
        b_l2, b_llc, b_dram = res.bandwidths()
        level = int(np.max(step.weight_level))
        t = float((count * nbytes).sum() / float(np.max(level_bandwidth(level, b_l2, b_llc, b_dram))))
        terms.append(Term(WIDENED, t, f"a {'FP32' if e_f == 4 else 'BF16'} copy of each quantized weight written and "  # type: ignore[arg-type]
                          "read back"))
    if engine.kv_dtype is not None and DTYPE_BYTES[engine.kv_dtype] > DTYPE_BYTES[ceiling_kv]:
        extra_bytes = kv_elements * (DTYPE_BYTES[engine.kv_dtype] - DTYPE_BYTES[ceiling_kv])
        b_l2, b_llc, b_dram = res.bandwidths()
        lv = level_of(kv_elements * DTYPE_BYTES[engine.kv_dtype], step.l2_capacity, step.llc_capacity)
        t = float(extra_bytes / float(np.max(level_bandwidth(lv, b_l2, b_llc, b_dram))))
        terms.append(Term(KV, t, f"the KV cache in {engine.kv_dtype}, not {ceiling_kv}"))  # type: ignore[arg-type]
    return terms


def check_decode(platform: Platform, model: ModelSpec, precision: str, baseline: str, *, throughput_speedup: float,
                 batch: int = 1, context: int | None = None, engine: Engine = Engine(),
                 source: EfficiencySource = NO_EFFICIENCIES, memory_model: MemoryModel = MemoryModel.LEVELS,
                 kv_dtype: str | None = None) -> CheckResult:
    """A measured decode speedup (tokens/s over ``baseline``'s) against the ceiling and the engine's terms."""
    if not (throughput_speedup > 0 and np.isfinite(throughput_speedup)):
        raise UserError(f"--throughput-speedup {throughput_speedup}: a measured speedup is a positive number")
    if precision == baseline:
        raise UserError(f"--precision {precision} is the baseline too: nothing to compare")
    if model.family != "decoder":
        raise UserError(f"--phase decode: {model.name} is an encoder; decode applies to decoders")
    applied = source.notes(platform)
    ev = evaluate(platform, model, EstimateQuery(
        precisions=[precision], baseline=baseline,
        workload=WorkloadSpec(phase=Phase.DECODE, batch=batch, context=context),
        ceiling=CeilingSpec(memory_model=memory_model), source=source, options=StepOptions(kv_dtype=kv_dtype)))
    kv_elements = ev.work.kv_cache_elements()
    sides = []
    for e, real in zip(ev.evaluated, ev.realistic):
        ceiling_kv = kv_dtype or ev.res.non_gemm_peaks(e.recipe.non_gemm_mode)[0]
        terms = list(real.terms) + engine_terms(ev.res, e, ev.gemms, engine, kv_elements, ceiling_kv)
        sides.append((e, real, terms, real.ceiling_s + sum(t.seconds for t in terms)))
    (base, base_real, base_terms, t_base), (new, new_real, new_terms, t_new) = sides
    ceiling = base_real.ceiling_s / new_real.ceiling_s
    realistic = t_base / t_new
    # in units of the baseline's realistic time: 1/S' - 1/S = (terms(new) - terms(base) / S) / T_b'
    base_extra = sum(t.seconds for t in base_terms)
    shown = list(new_terms)
    if base_extra > 0:
        shown.append(Term("the baseline's own terms", -base_extra / ceiling,  # type: ignore[arg-type]
                          f"the {baseline} baseline's terms ({base_extra / t_base:.1%} of its time) make it slower, "
                          "so the speedup larger", True))
    ceiling_time, gap = 1 / ceiling, 1 / throughput_speedup - 1 / ceiling
    total = 1 / realistic - ceiling_time
    kv_share = _kv_share(new)
    notes = applied + [f"decode at batch {batch}, {ev.work.context} tokens in the KV cache; the KV cache is "
                       f"{kv_share:.0%} of the {precision} ceiling step (in the ceiling)",
                       "engine: " + ", ".join(filter(None, [
                           f"matmul at {engine.ops_per_cycle:g} ops/cycle/core" if engine.ops_per_cycle else "",
                           f"{engine.dequant} dequantization", "weights widened to floats" if engine.widen else "",
                           f"KV cache in {engine.kv_dtype}" if engine.kv_dtype else ""]))]
    if gap <= 0:
        notes.append("the measurement meets or beats the ceiling speedup: the baseline ran further below its "
                     "ceiling than the precision did, not a real breakthrough")
    comp = Comparison(
        precision=precision, baseline=baseline, f_gemm=float(base.step.gemm_time / base.step.step_time),
        f_gemm_source="modelled: the decode step's GEMM share at the ceiling",
        gemm_speedup=float(base.step.gemm_time / new.step.gemm_time),
        non_gemm_speedup=float(base.step.non_gemm_time / new.step.non_gemm_time), baseline_time_s=t_base,
        rows=[CheckRow("throughput", throughput_speedup, ceiling, throughput_speedup / ceiling, realistic,
                       throughput_speedup / realistic)],
        terms=[CheckTerm(t.name.value if isinstance(t.name, TermName) else str(t.name), t.seconds, t.seconds / t_base,
                         t.seconds / (gap * t_base) if gap > 0 else None, t.how, t.calibrated) for t in shown],
        explained_gap=min(total / gap, 1.0) if gap > 0 else 0.0, unexplained=max(gap - total, 0.0),
    )
    return CheckResult(model=model.name, cpu=platform.name, source="typed (decode)",
                       calibration=source.calibration_name if source.calibration is not None else None,
                       comparisons=[comp], notes=notes, memory_model=MemoryModel(memory_model).value)


def _kv_share(e: BuiltStep) -> float:
    ops = e.step.ops
    kv = float((ops.time * ops.reads_kv).sum())
    return kv / float(e.step.step_time)
