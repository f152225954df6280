"""The roofline ceiling of one GEMM shape in one precision (what `validate` compares kernels with)."""

from __future__ import annotations

from dataclasses import dataclass

from roofline.calc.gemm import activation_meta_bytes, weight_meta_bytes
from roofline.calc.gemm_roofline import gemm_roofline
from roofline.estimate.paths import choose_path
from roofline.spec.platform import Platform
from roofline.spec.precision import get_recipe


@dataclass(frozen=True)
class ShapeCeiling:
    precision: str
    compute_path: str
    native: bool
    peak_ops_per_s: float
    arithmetic_intensity: float
    bandwidth_bytes_per_s: float
    llc_resident: bool
    bound: str
    attainable_ops_per_s: float


def shape_ceiling(platform: Platform, precision: str, m: int, n: int, k: int, *, sockets: int | None = None,
                  bandwidth: str = "measured") -> ShapeCeiling:
    """``min(P, AI x B)`` for ``Y[m,n] = X[m,k] W[n,k]^T`` called repeatedly on its own.

    A microbenchmark reuses one weight, so the weight is LLC-resident whenever it fits the
    LLC (and the platform gives an LLC bandwidth): ``B = B_eff``, else ``B_mem``.
    """
    recipe = get_recipe(precision)
    sockets = sockets or int(platform.sockets.value)
    path = choose_path(platform, recipe.compute_dtype, sockets)
    w_meta = weight_meta_bytes(n, k, recipe.w_scale, recipe.w_group_size, recipe.scale_bytes, recipe.w_zero_point)
    x_meta = activation_meta_bytes(m, recipe.x_scale, recipe.scale_bytes)
    b_mem = platform.dram_bytes_per_s(sockets, bandwidth)
    b_llc = platform.llc_bytes_per_s(sockets)
    resident = b_llc is not None and recipe.e_w * n * k + float(w_meta) <= platform.llc_domain_bytes
    g = gemm_roofline(m, n, k, recipe.e_x, recipe.e_w, recipe.e_y, path.peak, b_mem,
                      b_llc if b_llc is not None else b_mem, resident, x_meta=x_meta, w_meta=w_meta)
    return ShapeCeiling(
        precision=precision, compute_path=path.name, native=path.native, peak_ops_per_s=path.peak,
        arithmetic_intensity=float(g.ai), bandwidth_bytes_per_s=float(g.bandwidth), llc_resident=bool(resident),
        bound="compute" if bool(g.compute_bound) else "memory", attainable_ops_per_s=float(g.attainable),
    )
