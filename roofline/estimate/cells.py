"""The recipe of each GEMM row of a step: a precision's recipe for the layer projections, and for
the lm_head the unquantized float recipe of that precision (FP32 for fp32, else BF16) unless the
lm_head is quantized too."""

from __future__ import annotations

import numpy as np

from roofline.calc.shapes import GemmList
from roofline.spec.precision import RECIPES, PrecisionRecipe


def lm_head_recipe(recipe: PrecisionRecipe, quantize: bool) -> PrecisionRecipe:
    if quantize or recipe.name == "fp32":
        return recipe
    return RECIPES["fp32"] if recipe.x_dtype == "fp32" and recipe.compute_dtype == "fp32" else RECIPES["bf16"]


def cell_recipes(recipe: PrecisionRecipe, gemms: GemmList, lm_head: np.ndarray | None = None,
                 quantize_lm_head: bool = False) -> list[PrecisionRecipe]:
    """``recipes[j]`` for GEMM row ``j``; ``lm_head`` marks the lm_head rows."""
    mask = np.zeros(len(gemms), dtype=bool) if lm_head is None else lm_head
    return [lm_head_recipe(recipe, quantize_lm_head) if is_lm else recipe for is_lm in mask]
