"""``roofline estimate``: platform + model + precisions -> :class:`EstimateResult`.

The arithmetic is in :mod:`roofline.calc`; this module picks the inputs
(compute path, bandwidth, LLC residency, Amdahl inputs), calls the calculators
once over the whole (precision x shape) grid, and records where every input
came from.
"""

from __future__ import annotations

import numpy as np

from roofline import __version__
from roofline.calc.aggregate import aggregate_throughput
from roofline.calc.amdahl import amdahl
from roofline.calc.gemm import activation_meta_bytes, weight_meta_bytes
from roofline.calc.gemm_roofline import gemm_roofline
from roofline.calc.llc import llc_resident
from roofline.calc.non_gemm import op_times, transformer_non_gemm
from roofline.calc.shapes import transformer_gemms
from roofline.errors import UserError
from roofline.estimate.amdahl_inputs import (
    Overrides,
    find_measured,
    resolve_f_gemm,
    resolve_gemm_speedup,
    resolve_non_gemm_speedup,
)
from roofline.estimate.paths import choose_path, path_peak
from roofline.results.estimate import (
    ComputePathResult,
    EstimateResult,
    GemmResult,
    LeftOut,
    PlatformResult,
    PrecisionResult,
    Provenance,
    SpeedupResult,
    WorkloadResult,
)
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import PrecisionRecipe, get_recipe
from roofline.units import DTYPE_BYTES

LEFT_OUT = [
    LeftOut(what="pooler, classifier and lm_head GEMMs", why="run once per request on one row; negligible, as in the reference paper"),
    LeftOut(what="bias and other GEMM epilogues", why="assumed fused into the GEMM (oneDNN post-ops)"),
    LeftOut(what="quantization overheads (activation quantize/dequantize, scale search, smoothing, u8 compensation)", why="not part of the ceiling; the ceiling is what an ideal INT8 kernel allows"),
    LeftOut(what="framework and dispatch overhead, layout copies", why="not in the modelled non-GEMM time, which is therefore a lower bound"),
]


def default_precisions(platform: Platform) -> list[str]:
    """fp32, bf16 where the platform computes BF16 natively, and int8-static."""
    out = ["fp32"]
    if platform.paths_for("bf16"):
        out.append("bf16")
    out.append("int8-static")
    return out


def estimate(
    platform: Platform,
    model: ModelSpec,
    *,
    precisions: list[str] | None = None,
    baseline: str = "fp32",
    batch: int = 1,
    seq_len: int = 256,
    sockets: int | None = None,
    bandwidth: str = "measured",
    fused_qkv: bool = True,
    overrides: Overrides = Overrides(),
    platform_file: str = "",
) -> EstimateResult:
    _check_workload(model, batch, seq_len)
    _check_overrides(overrides)
    n_sockets = int(platform.sockets.value)
    if sockets is None:
        sockets = n_sockets
    if not 1 <= sockets <= n_sockets:
        raise UserError(f"--sockets {sockets}: {platform.name} has {n_sockets} socket(s)")

    names = list(dict.fromkeys([baseline, *(precisions or default_precisions(platform))]))
    recipes = [get_recipe(n) for n in names]
    base = recipes[0]

    gemms = transformer_gemms(
        tokens=batch * seq_len, hidden=model.hidden_size, intermediate=model.intermediate_size,
        layers=model.num_hidden_layers, heads=model.num_attention_heads, kv_heads=model.kv_heads,
        head_dim=model.head_size, gated_mlp=model.gated_mlp, fused_qkv=fused_qkv,
    )
    b_mem = platform.dram_bytes_per_s(sockets, bandwidth)
    b_llc = platform.llc_bytes_per_s(sockets)
    llc_domain = platform.llc_domain_bytes
    paths = [choose_path(platform, r.compute_dtype, sockets) for r in recipes]

    # --- the (precision x shape) grid, one calculator call -------------------------------
    col = lambda xs: np.array(xs, dtype=float)[:, None]  # noqa: E731  per-precision column
    w_meta = np.stack([weight_meta_bytes(gemms.n, gemms.k, r.w_scale, r.w_group_size, r.scale_bytes, r.w_zero_point) for r in recipes])
    x_meta = np.stack([activation_meta_bytes(gemms.m, r.x_scale, r.scale_bytes) for r in recipes])
    e_w = col([r.e_w for r in recipes])
    weight_bytes = (gemms.count * (e_w * gemms.n * gemms.k + w_meta)).sum(axis=1)
    fits = llc_resident(weight_bytes, llc_domain)
    resident = fits & (b_llc is not None)
    grid = gemm_roofline(
        gemms.m, gemms.n, gemms.k,
        col([r.e_x for r in recipes]), e_w, col([r.e_y for r in recipes]),
        col([p.peak for p in paths]), b_mem, b_llc if b_llc is not None else b_mem, resident[:, None],
        x_meta=x_meta, w_meta=w_meta,
    )
    aggregate = aggregate_throughput(gemms.count, grid.flops, grid.attainable)
    gemm_time = (gemms.count * grid.time).sum(axis=1)
    if not (np.isfinite(grid.attainable).all() and np.isfinite(grid.ai).all() and np.isfinite(aggregate).all()):
        raise ArithmeticError("non-finite roofline figures: a bug, please report it with the command line")

    # --- modelled non-GEMM time per mode ---------------------------------------------------
    non_gemm = _non_gemm_times(platform, model, batch, seq_len, sockets, b_mem)

    # --- results ---------------------------------------------------------------------------
    precision_results: dict[str, PrecisionResult] = {}
    for i, (r, p) in enumerate(zip(recipes, paths)):
        notes = [p.note] if p.note else []
        if fits[i] and b_llc is None:
            notes.append(f"weights fit the LLC but {platform.name} gives no LLC bandwidth: DRAM bandwidth used")
        precision_results[r.name] = PrecisionResult(
            name=r.name, description=r.description, compute_path=p.name, compute_dtype=p.dtype, native=p.native,
            peak_ops_per_s=p.peak, element_bytes={"x": r.e_x, "w": r.e_w, "y": r.e_y},
            gemms=[_gemm_result(gemms, grid, i, j, bool(resident[i])) for j in range(len(gemms))],
            aggregate_ops_per_s=float(aggregate[i]), gemm_time_s=float(gemm_time[i]),
            weight_bytes=float(weight_bytes[i]), llc_fraction=float(weight_bytes[i] / llc_domain),
            llc_resident=bool(resident[i]), non_gemm_mode=r.non_gemm_mode,
            non_gemm_time_s=non_gemm[r.non_gemm_mode], notes=notes,
        )

    measured = find_measured(model, platform, base.name, batch, seq_len)
    f_modelled = gemm_time[0] / (gemm_time[0] + non_gemm[base.non_gemm_mode])
    f = resolve_f_gemm(measured, overrides.f_gemm, float(f_modelled))
    speedups = []
    for i, r in enumerate(recipes[1:], start=1):
        s = resolve_gemm_speedup(overrides.gemm_speedup, float(aggregate[i] / aggregate[0]))
        s_non = resolve_non_gemm_speedup(
            measured, overrides.non_gemm_speedup, base, r, non_gemm[base.non_gemm_mode] / non_gemm[r.non_gemm_mode]
        )
        speedups.append(SpeedupResult(
            precision=r.name, baseline=base.name,
            gemm_speedup=s.value, gemm_speedup_source=s.source,
            f_gemm=f.value, f_gemm_source=f.source,
            non_gemm_speedup=s_non.value, non_gemm_speedup_source=s_non.source,
            end_to_end_ceiling=float(amdahl(f.value, s.value, s_non.value)),
        ))

    return EstimateResult(
        tool=f"roofline {__version__}",
        platform=_platform_result(platform, sockets, bandwidth, b_mem, b_llc, platform_file),
        workload=WorkloadResult(
            model=model.name, family=model.family, phase="forward" if model.family == "encoder" else "prefill",
            batch=batch, seq_len=seq_len, m=batch * seq_len, layers=model.num_hidden_layers, fused_qkv=fused_qkv,
        ),
        baseline=base.name,
        precisions=precision_results,
        speedups=speedups,
        inputs=_provenance(platform, recipes, paths, bandwidth),
        left_out=LEFT_OUT,
    )


# ------------------------------------------------------------------------------- helpers


def _check_workload(model: ModelSpec, batch: int, seq_len: int) -> None:
    if batch < 1:
        raise UserError(f"--batch {batch}: must be a positive whole number")
    if seq_len < 1:
        raise UserError(f"--seq-len {seq_len}: must be a positive whole number")
    if model.family == "encoder" and seq_len > model.max_position_embeddings:
        raise UserError(
            f"--seq-len {seq_len}: {model.name} has {model.max_position_embeddings} positions "
            f"(max_position_embeddings); use at most that"
        )


def _check_overrides(o: Overrides) -> None:
    if o.f_gemm is not None and not 0.0 <= o.f_gemm <= 1.0:
        raise UserError(f"--f-gemm {o.f_gemm}: a fraction of time, between 0 and 1")
    for flag, v in (("--gemm-speedup", o.gemm_speedup), ("--non-gemm-speedup", o.non_gemm_speedup)):
        if v is not None and not v > 0:
            raise UserError(f"{flag} {v}: a speedup is a positive number")


def _non_gemm_times(platform: Platform, model: ModelSpec, batch: int, seq_len: int, sockets: int, b_mem: float) -> dict[str, float]:
    """Modelled roofline time of the non-GEMM work, per non-GEMM mode.

    fp32: FP32 activations, attention on the FP32 path. amp-bf16: BF16 activations
    (half the bytes), attention on the BF16 path where native; vector math in FP32.
    """
    ops = transformer_non_gemm(
        batch=batch, seq_len=seq_len, hidden=model.hidden_size, intermediate=model.intermediate_size,
        layers=model.num_hidden_layers, heads=model.num_attention_heads, kv_heads=model.kv_heads,
        head_dim=model.head_size, gated_mlp=model.gated_mlp,
    )
    vector_peak = choose_path(platform, "fp32", sockets).peak
    out = {}
    for mode, dtype in (("fp32", "fp32"), ("amp-bf16", "bf16")):
        matmul_peak = choose_path(platform, dtype, sockets).peak
        peak = np.where(ops.matmul, matmul_peak, vector_peak)
        out[mode] = float(op_times(ops.flops, ops.elements * DTYPE_BYTES[dtype], peak, b_mem).sum())
    return out


def _gemm_result(gemms, grid, i: int, j: int, resident: bool) -> GemmResult:
    return GemmResult(
        name=gemms.names[j], m=int(gemms.m[j]), n=int(gemms.n[j]), k=int(gemms.k[j]), count=int(gemms.count[j]),
        flops=float(grid.flops[i, j]), bytes=float(grid.nbytes[i, j]),
        x_bytes=float(grid.d_x[i, j]), w_bytes=float(grid.d_w[i, j]), y_bytes=float(grid.d_y[i, j]),
        arithmetic_intensity=float(grid.ai[i, j]), balance_point=float(grid.balance_point[i, j]),
        bound="compute" if grid.compute_bound[i, j] else "memory",
        bandwidth_bytes_per_s=float(grid.bandwidth[i, j]),
        bandwidth_kind="llc-effective" if resident else "dram",
        attainable_ops_per_s=float(grid.attainable[i, j]),
        time_s=float(gemms.count[j] * grid.time[i, j]),
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


def _provenance(platform: Platform, recipes: list[PrecisionRecipe], paths, bandwidth: str) -> list[Provenance]:
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
