"""The roofline ceiling of one GEMM shape in one precision (what `validate` compares kernels with)."""

from __future__ import annotations

from dataclasses import dataclass

from roofline.model.harness import shape_run
from roofline.model.step import BOUNDS
from roofline.spec.platform import Platform
from roofline.spec.vocab import Bandwidth, Ceiling, MemoryModel


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
    """compute or memory"""
    attainable_ops_per_s: float
    bound_by: str = "compute"
    """compute, L2, LLC or DRAM"""


def shape_ceiling(platform: Platform, precision: str, m: int, n: int, k: int, *, sockets: int | None = None,
                  bandwidth: Bandwidth | None = None, memory_model: MemoryModel = MemoryModel.LEVELS,
                  ceiling: Ceiling = Ceiling.ATTAINABLE) -> ShapeCeiling:
    """The ceiling of ``Y[m,n] = X[m,k] W[n,k]^T`` called repeatedly on its own by one process on every core."""
    h = shape_run(platform, precision, "shape", m, n, k, sockets=sockets, bandwidth=bandwidth,
                  memory_model=memory_model, ceiling=ceiling)
    g, step = h.step.gemm, h.step
    path = h.res.path(h.recipe.compute_dtype)
    return ShapeCeiling(
        precision=precision, compute_path=path.name, native=path.native, peak_ops_per_s=float(path.peak),
        arithmetic_intensity=float(g.flops[0] / g.nbytes[0]), bandwidth_bytes_per_s=float(g.bandwidth[0]),
        llc_resident=bool(step.fits_llc) and h.res.b_llc is not None,
        bound="compute" if bool(g.compute_bound[0]) else "memory", attainable_ops_per_s=float(g.attainable[0]),
        bound_by=BOUNDS[int(g.bound[0])].value,
    )
