"""``roofline estimate``: platform + model + workload + precisions -> :class:`EstimateResult`.

The arithmetic is in :mod:`roofline.calc`; this module picks the inputs (compute paths,
bandwidth, LLC residency, Amdahl inputs), evaluates the (precision x GEMM) grid once
(:mod:`roofline.estimate.grid`), and records where every input came from.
"""

from __future__ import annotations

import math

import numpy as np

from roofline import __version__
from roofline.calc.amdahl import amdahl
from roofline.estimate.amdahl_inputs import (
    Overrides,
    find_measured,
    resolve_f_gemm,
    resolve_gemm_speedup,
    resolve_non_gemm_speedup,
)
from roofline.calc.non_gemm import op_roofline
from roofline.estimate.decode import compute_bound_batch, step_split
from roofline.estimate.overheads import named_terms
from roofline.estimate.grid import GridEval, evaluate_grid
from roofline.estimate.paths import choose_path, non_gemm_peaks, path_peak
from roofline.estimate.workload import Workload, make_workload
from roofline.errors import UserError
from roofline.results.estimate import (
    ComputePathResult,
    DecodeResult,
    EstimateResult,
    GemmResult,
    LeftOut,
    OverheadResult,
    PlatformResult,
    PrecisionResult,
    Provenance,
    SpeedupResult,
    WorkloadResult,
)
from roofline.spec.calibration import Calibration
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import PrecisionRecipe, get_recipe
from roofline.units import DTYPE_BYTES

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


def default_precisions(platform: Platform, model: ModelSpec) -> list[str]:
    """Encoders: fp32, bf16 where the platform computes BF16 natively, int8-static.
    Decoders: bf16 (fp32 without native BF16), int8-weight-only, int4-weight-only, int8-dynamic."""
    native_bf16 = bool(platform.paths_for("bf16"))
    if model.family == "decoder":
        return ["bf16" if native_bf16 else "fp32", "int8-weight-only", "int4-weight-only", "int8-dynamic"]
    return ["fp32", *(["bf16"] if native_bf16 else []), "int8-static"]


def default_baseline(platform: Platform, model: ModelSpec) -> str:
    return "bf16" if model.family == "decoder" and platform.paths_for("bf16") else "fp32"


def estimate(
    platform: Platform,
    model: ModelSpec,
    *,
    precisions: list[str] | None = None,
    baseline: str | None = None,
    batch: int = 1,
    seq_len: int = 256,
    phase: str | None = None,
    context: int | None = None,
    sockets: int | None = None,
    bandwidth: str = "measured",
    fused_qkv: bool = True,
    group_size: int | None = None,
    kv_dtype: str | None = None,
    quantize_lm_head: bool = False,
    overrides: Overrides = Overrides(),
    platform_file: str = "",
    calibration: Calibration | None = None,
    calibration_name: str | None = None,
    calibration_any_platform: bool = False,
) -> EstimateResult:
    result_notes = calibration_notes(calibration, platform, calibration_name, calibration_any_platform)
    work = make_workload(model, phase, batch, seq_len, context, fused_qkv)
    _check_overrides(overrides)
    n_sockets = int(platform.sockets.value)
    sockets = n_sockets if sockets is None else sockets
    if not 1 <= sockets <= n_sockets:
        raise UserError(f"--sockets {sockets}: {platform.name} has {n_sockets} socket(s)")
    if kv_dtype is not None and kv_dtype not in DTYPE_BYTES:
        raise UserError(f"--kv-dtype {kv_dtype}: one of {', '.join(DTYPE_BYTES)}")
    baseline = baseline or default_baseline(platform, model)
    names = list(dict.fromkeys([baseline, *(precisions or default_precisions(platform, model))]))
    recipes = [get_recipe(n, group_size) for n in names]
    base = recipes[0]

    gemms, lm_head = work.gemms()
    ev = evaluate_grid(platform, recipes, gemms, lm_head, sockets=sockets, bandwidth=bandwidth,
                       quantize_lm_head=quantize_lm_head)
    b_mem = platform.dram_bytes_per_s(sockets, bandwidth)
    non_gemm = {mode: _non_gemm(platform, work, sockets, b_mem, mode, kv_dtype) for mode in ("fp32", "amp-bf16")}

    precision_results: dict[str, PrecisionResult] = {}
    for i, (r, p) in enumerate(zip(recipes, ev.paths)):
        notes = [p.note] if p.note else []
        if ev.fits_llc[i] and not ev.resident[i]:
            notes.append(f"weights fit the LLC but {platform.name} gives no LLC bandwidth: DRAM bandwidth used")
        if model.family == "decoder" and not quantize_lm_head and r.quantized:
            notes.append(f"lm_head kept in {ev.cell_recipes[i][-1].name} (--quantize-lm-head to quantize it)")
        t_non = float(non_gemm[r.non_gemm_mode].total)
        decode = _decode(platform, work, ev, i, gemms, non_gemm[r.non_gemm_mode], sockets, bandwidth) \
            if work.phase == "decode" else None
        precision_results[r.name] = PrecisionResult(
            name=r.name, description=r.description, compute_path=p.name, compute_dtype=p.dtype, native=p.native,
            peak_ops_per_s=p.peak, element_bytes={"x": r.e_x, "w": r.e_w, "y": r.e_y},
            gemms=[_gemm_result(gemms, ev, i, j) for j in range(len(gemms))],
            aggregate_ops_per_s=float(ev.aggregate[i]), gemm_time_s=float(ev.gemm_time[i]),
            weight_bytes=float(ev.weight_bytes[i]), llc_fraction=float(ev.weight_bytes[i] / platform.llc_domain_bytes),
            llc_resident=bool(ev.resident[i]), non_gemm_mode=r.non_gemm_mode, non_gemm_time_s=t_non,
            step_time_s=float(ev.gemm_time[i]) + t_non, decode=decode, notes=notes,
        )

    speedups = _speedups(platform, model, work, ev, recipes, base, non_gemm, overrides, gemms, sockets, calibration)
    left_out = COMMON_LEFT_OUT + (ENCODER_LEFT_OUT if model.family == "encoder" else DECODER_LEFT_OUT)
    return EstimateResult(
        tool=f"roofline {__version__}",
        platform=_platform_result(platform, sockets, bandwidth, b_mem, platform.llc_bytes_per_s(sockets), platform_file),
        workload=WorkloadResult(
            model=model.name, family=model.family, phase=work.phase, batch=batch, seq_len=seq_len, m=work.tokens,
            layers=model.num_hidden_layers, fused_qkv=fused_qkv, context=work.context if work.phase == "decode" else None,
        ),
        baseline=base.name, precisions=precision_results, speedups=speedups,
        inputs=_provenance(platform, ev.paths + [choose_path(platform, "fp32", sockets)], bandwidth),
        left_out=left_out, calibration=calibration_name, notes=result_notes,
    )


def calibration_notes(calibration: Calibration | None, platform: Platform, name: str | None,
                      any_platform: bool) -> list[str]:
    """A calibration applies to the platform it was fitted on: another platform is refused, unless
    ``any_platform`` (``--calibration-any-platform``), and then the result says so (the returned notes)."""
    if calibration is None or calibration.platform.lower() in {n.lower() for n in platform.all_names}:
        return []
    label = f"--calibration {name}" if name else "the calibration"
    if not any_platform:
        raise UserError(f"{label}: fitted on platform '{calibration.platform}', not on '{platform.name}'; calibrate "
                        f"this platform (roofline validate, then roofline calibrate), or give "
                        "--calibration-any-platform to apply it anyway")
    return [f"{label} was fitted on '{calibration.platform}' and is applied to '{platform.name}' "
            "(--calibration-any-platform): its kernel efficiencies and dispatch costs are another platform's"]


# ------------------------------------------------------------------------------- pieces


class _NonGemm:
    """Per-op roofline times of the non-GEMM work in one mode."""

    def __init__(self, t_compute: np.ndarray, t_memory: np.ndarray, kv_mask: np.ndarray, kv_bytes: float, kv_dtype: str):
        self.t_compute, self.t_memory, self.kv_mask = t_compute, t_memory, kv_mask
        self.kv_bytes, self.kv_dtype = kv_bytes, kv_dtype

    @property
    def total(self) -> float:
        return float(np.maximum(self.t_compute, self.t_memory).sum())


def _non_gemm(platform: Platform, work: Workload, sockets: int, b_mem: float, mode: str, kv_dtype: str | None) -> _NonGemm:
    """fp32: FP32 activations, attention on the FP32 path. amp-bf16: BF16 activations (half the
    bytes), attention on the BF16 path where native; vector math in FP32. The KV cache is in the
    activation dtype unless --kv-dtype says otherwise."""
    ops = work.non_gemm()
    act, matmul_peak, vector_peak = non_gemm_peaks(platform, mode, sockets)
    kv = kv_dtype or act
    t_compute, t_memory = op_roofline(ops, matmul_peak, vector_peak, DTYPE_BYTES[act], DTYPE_BYTES[kv], b_mem)
    kv_mask = ops.kv_cache if ops.kv_cache is not None else np.zeros(len(ops.names), dtype=bool)
    return _NonGemm(t_compute, t_memory, kv_mask, work.kv_cache_elements() * DTYPE_BYTES[kv], kv)


def _decode(platform, work: Workload, ev: GridEval, i: int, gemms, ng: _NonGemm, sockets: int, bandwidth: str) -> DecodeResult:
    split = step_split(ev, i, gemms, ng.t_compute, ng.t_memory, ng.kv_mask)
    latency = split.total_s
    return DecodeResult(
        token_latency_s=latency, tokens_per_s=work.batch / latency, bound=split.bound, bound_detail=split.detail(),
        weight_bytes=float(ev.weight_bytes[i]), kv_cache_bytes=ng.kv_bytes, kv_dtype=ng.kv_dtype,
        compute_bound_batch=compute_bound_batch(platform, ev, i, gemms, sockets=sockets, bandwidth=bandwidth),
    )


def _speedups(platform, model, work, ev: GridEval, recipes, base: PrecisionRecipe, non_gemm, overrides, gemms,
              sockets: int, calibration: Calibration | None) -> list[SpeedupResult]:
    measured = find_measured(model, platform, base.name, work.batch, work.seq_len) if work.phase == "forward" else None
    t_base_non = non_gemm[base.non_gemm_mode].total
    f_modelled = ev.gemm_time[0] / (ev.gemm_time[0] + t_base_non)
    f = resolve_f_gemm(measured, overrides.f_gemm, float(f_modelled))
    out = []
    for i, r in enumerate(recipes[1:], start=1):
        s = resolve_gemm_speedup(overrides.gemm_speedup, float(ev.aggregate[i] / ev.aggregate[0]) if
                                 work.phase != "decode" else float(ev.gemm_time[0] / ev.gemm_time[i]))
        s_non = resolve_non_gemm_speedup(measured, overrides.non_gemm_speedup, base, r,
                                         t_base_non / non_gemm[r.non_gemm_mode].total)
        # the realistic estimate: the same Amdahl times plus the named overhead terms, in baseline units
        eta_b = calibration.gemm(base.name) if calibration else 1.0
        eta_p = calibration.gemm(r.name) if calibration else 1.0
        t_base = float(ev.gemm_time[0]) / eta_b / f.value if f.value > 0 else float("inf")
        terms = named_terms(platform, r, gemms, sockets=sockets, non_gemm_mode=r.non_gemm_mode, calibration=calibration)
        extra = sum(t.seconds for t in terms) / t_base if math.isfinite(t_base) else 0.0
        realistic_time = 1 / float(amdahl(f.value, s.value * eta_p / eta_b, s_non.value)) + extra
        out.append(SpeedupResult(
            precision=r.name, baseline=base.name, gemm_speedup=s.value, gemm_speedup_source=s.source,
            f_gemm=f.value, f_gemm_source=f.source, non_gemm_speedup=s_non.value,
            non_gemm_speedup_source=s_non.source, end_to_end_ceiling=float(amdahl(f.value, s.value, s_non.value)),
            realistic=1 / realistic_time,
            overheads=[OverheadResult(t.name, t.seconds, t.seconds / t_base if math.isfinite(t_base) else 0.0, t.how,
                                      t.calibrated) for t in terms],
        ))
    return out


def _check_overrides(o: Overrides) -> None:
    if o.f_gemm is not None and not 0.0 <= o.f_gemm <= 1.0:
        raise UserError(f"--f-gemm {o.f_gemm}: a fraction of time, between 0 and 1")
    for flag, v in (("--gemm-speedup", o.gemm_speedup), ("--non-gemm-speedup", o.non_gemm_speedup)):
        if v is not None and not v > 0:
            raise UserError(f"{flag} {v}: a speedup is a positive number")


def _gemm_result(gemms, ev: GridEval, i: int, j: int) -> GemmResult:
    g = ev.grid
    return GemmResult(
        name=gemms.names[j], recipe=ev.cell_recipes[i][j].name, m=int(gemms.m[j]), n=int(gemms.n[j]),
        k=int(gemms.k[j]), count=int(gemms.count[j]),
        flops=float(g.flops[i, j]), bytes=float(g.nbytes[i, j]),
        x_bytes=float(g.d_x[i, j]), w_bytes=float(g.d_w[i, j]), y_bytes=float(g.d_y[i, j]),
        arithmetic_intensity=float(g.ai[i, j]), balance_point=float(g.balance_point[i, j]),
        bound="compute" if g.compute_bound[i, j] else "memory",
        bandwidth_bytes_per_s=float(g.bandwidth[i, j]),
        bandwidth_kind="llc-effective" if ev.resident[i] else "dram",
        attainable_ops_per_s=float(g.attainable[i, j]),
        time_s=float(gemms.count[j] * g.time[i, j]),
    )


def _platform_result(platform: Platform, sockets: int, bandwidth: str, b_mem: float, b_llc: float | None, file: str) -> PlatformResult:
    return PlatformResult(
        name=platform.name, description=platform.description, file=file, sockets_used=sockets,
        cores=int(sockets * platform.cores_per_socket.value),
        dram_bandwidth_bytes_per_s=b_mem, dram_bandwidth_kind=platform.dram_kind(bandwidth),
        llc_bytes_per_domain=platform.llc_domain_bytes, llc_domains=sockets * platform.llc.domains_per_socket,
        llc_read_bytes_per_s=b_llc,
        compute_paths=[
            ComputePathResult(
                name=name, dtype=p.dtype, isa_class=p.isa_class, frequency_hz=platform.frequency_hz(name),
                ops_per_cycle_per_core=p.ops_per_cycle.value, peak_ops_per_s=path_peak(platform, name, sockets),
                dram_balance_point=path_peak(platform, name, sockets) / b_mem,
            )
            for name, p in platform.compute.items()
        ],
    )


def _provenance(platform: Platform, paths, bandwidth: str) -> list[Provenance]:
    """Every platform number the estimate used, with its source."""
    used = [("sockets", platform.sockets), ("cores_per_socket", platform.cores_per_socket)]
    for p in dict.fromkeys(c.name for c in paths):
        path = platform.compute[p]
        used += [(f"frequency_ghz.{path.isa_class}", platform.frequency_ghz[path.isa_class]),
                 (f"compute.{p}.ops_per_cycle", path.ops_per_cycle)]
    kind = platform.dram_kind(bandwidth)
    used.append((f"dram.{kind}_gb_per_s", getattr(platform.dram, f"{kind}_gb_per_s")))
    used.append(("llc.size_mib", platform.llc.size_mib))
    if platform.llc.read_gb_per_s.known:
        used.append(("llc.read_gb_per_s", platform.llc.read_gb_per_s))
    return [Provenance(what=w, value=f"{s.value:g}", kind=s.kind, source=s.source) for w, s in dict(used).items()]
