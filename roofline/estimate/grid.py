"""The (precision x GEMM) grid of one workload, evaluated in one calculator call.

Each cell has its own recipe: a precision's recipe for the layer projections, and for the
lm_head the unquantized float recipe of that precision (FP32 for fp32, else BF16) unless the
lm_head is quantized too. Per-cell arrays (element sizes, peaks, metadata, extra kernel work)
are built once and broadcast against the shapes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from roofline.calc.aggregate import aggregate_throughput
from roofline.calc.gemm import activation_meta_bytes, kernel_extra_ops, weight_meta_bytes
from roofline.calc.gemm_roofline import GemmRoofline, gemm_roofline
from roofline.calc.llc import llc_resident
from roofline.calc.shapes import GemmList
from roofline.estimate.paths import PathChoice, choose_path
from roofline.spec.platform import Platform
from roofline.spec.precision import RECIPES, PrecisionRecipe


def lm_head_recipe(recipe: PrecisionRecipe, quantize: bool) -> PrecisionRecipe:
    if quantize or recipe.name == "fp32":
        return recipe
    return RECIPES["fp32"] if recipe.x_dtype == "fp32" and recipe.compute_dtype == "fp32" else RECIPES["bf16"]


@dataclass(frozen=True)
class CellInputs:
    """Per-cell roofline inputs of one precision row, shaped like ``m`` broadcast against the shapes."""

    e_x: np.ndarray
    e_w: np.ndarray
    e_y: np.ndarray
    peak: np.ndarray
    x_meta: np.ndarray
    w_meta: np.ndarray
    extra: np.ndarray


def cell_inputs(platform: Platform, recipes: list[PrecisionRecipe], m, n, k, sockets: int) -> CellInputs:
    """``recipes[j]`` is the recipe of shape ``j``; ``m`` is ``(S,)``, or ``(B, S)`` for a sweep over B."""
    cols: dict[str, list] = {f: [] for f in CellInputs.__dataclass_fields__}
    m = np.asarray(m, dtype=float)
    for j, r in enumerate(recipes):
        mj = m[..., j]
        path = choose_path(platform, r.compute_dtype, sockets)
        cols["e_x"].append(np.full_like(mj, r.e_x))
        cols["e_w"].append(np.full_like(mj, r.e_w))
        cols["e_y"].append(np.full_like(mj, r.e_y))
        cols["peak"].append(np.full_like(mj, path.peak))
        cols["x_meta"].append(activation_meta_bytes(mj, r.x_scale, r.scale_bytes))
        cols["w_meta"].append(np.full_like(mj, float(weight_meta_bytes(n[j], k[j], r.w_scale, r.w_group_size,
                                                                        r.scale_bytes, r.w_zero_point))))
        cols["extra"].append(kernel_extra_ops(mj, n[j], k[j], r.dequant_ops_per_weight, r.activation_sum,
                                              r.w_group_size, r.compute_dtype == "int8"))
    return CellInputs(**{f: np.stack(np.broadcast_arrays(m[..., 0], *v)[1:], axis=-1) for f, v in cols.items()})


@dataclass(frozen=True)
class GridEval:
    recipes: list[PrecisionRecipe]
    cell_recipes: list[list[PrecisionRecipe]]
    paths: list[PathChoice]
    grid: GemmRoofline
    weight_bytes: np.ndarray
    fits_llc: np.ndarray
    resident: np.ndarray
    aggregate: np.ndarray
    gemm_time: np.ndarray
    vector_peak: float


def evaluate_grid(platform: Platform, recipes: list[PrecisionRecipe], gemms: GemmList, lm_head: np.ndarray, *,
                  sockets: int, bandwidth: str, quantize_lm_head: bool = False) -> GridEval:
    cell_recipes = [[lm_head_recipe(r, quantize_lm_head) if lm else r for lm in lm_head] for r in recipes]
    rows = [cell_inputs(platform, cr, gemms.m, gemms.n, gemms.k, sockets) for cr in cell_recipes]
    stack = {f: np.stack([getattr(r, f) for r in rows]) for f in CellInputs.__dataclass_fields__}
    b_mem = platform.dram_bytes_per_s(sockets, bandwidth)
    b_llc = platform.llc_bytes_per_s(sockets)
    weight_bytes = (gemms.count * (stack["e_w"] * gemms.n * gemms.k + stack["w_meta"])).sum(axis=1)
    fits = llc_resident(weight_bytes, platform.llc_domain_bytes)
    resident = fits & (b_llc is not None)
    vector_peak = choose_path(platform, "fp32", sockets).peak
    grid = gemm_roofline(
        gemms.m, gemms.n, gemms.k, stack["e_x"], stack["e_w"], stack["e_y"], stack["peak"], b_mem,
        b_llc if b_llc is not None else b_mem, resident[:, None], x_meta=stack["x_meta"], w_meta=stack["w_meta"],
        extra_ops=stack["extra"], extra_peak=vector_peak,
    )
    for name in ("attainable", "ai", "time"):
        if not np.isfinite(getattr(grid, name)).all():
            raise ArithmeticError(f"non-finite {name} in the roofline grid: a bug, please report the command line")
    return GridEval(
        recipes=recipes, cell_recipes=cell_recipes,
        paths=[choose_path(platform, r.compute_dtype, sockets) for r in recipes], grid=grid,
        weight_bytes=weight_bytes, fits_llc=fits, resident=resident,
        aggregate=aggregate_throughput(gemms.count, grid.flops, grid.attainable),
        gemm_time=(gemms.count * grid.time).sum(axis=1), vector_peak=vector_peak,
    )
