"""The recipe of each GEMM row of a step.

- A per-tensor mix (``q4_k_m``, ``q4_k_s``, ``q2_k_s``, ``gguf``: :mod:`roofline.spec.gguf_mix`) gives each row its own
  recipe, its lm_head included (as llama.cpp's quantizer writes ``output.weight`` for that mix).
- Otherwise every layer projection takes the precision's recipe, and the lm_head the unquantized
  float recipe of that precision (FP32 for fp32, else BF16) unless it is quantized too.
"""

from __future__ import annotations

import numpy as np

from roofline.calc.shapes import GemmList
from roofline.spec.model import ModelSpec
from roofline.spec.precision import MIX_NAMES, RECIPES, PrecisionRecipe, get_recipe

#: precisions that are per-tensor mixes rather than one recipe
MIXES = tuple(MIX_NAMES)


def precision_recipe(name: str, model: ModelSpec | None, group_size: int | None = None) -> PrecisionRecipe:
    """The recipe a precision is reported under: its own, or for a mix the element-weighted average of
    the model's weights (the rows still get their own, :func:`cell_recipes`)."""
    if name in MIXES:
        from roofline.spec.gguf_mix import average_recipe, tensor_types

        assert model is not None  # a mix is priced on a model's tensors (a linear microbenchmark runs variants)
        return average_recipe(name, tensor_types(name, model))
    return get_recipe(name, group_size)


def lm_head_recipe(recipe: PrecisionRecipe, quantize: bool, cols: int | None = None) -> PrecisionRecipe:
    """The lm_head's recipe: the precision's own when ``quantize``; a GGUF type's as llama.cpp's quantizer writes
    ``output.weight`` (:func:`gguf_output_precision`); else the unquantized float recipe."""
    if quantize or recipe.name == "fp32":
        return recipe
    if recipe.block is not None and cols is not None:
        return RECIPES[gguf_output_precision(recipe.block.name, cols)]
    return RECIPES["fp32"] if recipe.x_dtype == "fp32" and recipe.compute_dtype == "fp32" else RECIPES["bf16"]


def gguf_output_precision(block: str, cols: int) -> str:
    """``output.weight``'s type in a file llama-quantize writes of ``block`` (``llama_tensor_get_type_impl`` in
    ``src/llama-quant.cpp`` at 0c1e570): Q8_0 where the row length ``cols`` is not a multiple of the type's block,
    a Q8_0 file's own Q8_0, else Q6_K."""
    from roofline.spec.gguf_types import BLOCKS

    b = BLOCKS.get(block.split(" ", 1)[0])
    if block.startswith("q8_0") or (b is not None and cols % b.weights_per_block):
        return "q8_0"
    return "q6_k"


def cell_recipes(recipe: PrecisionRecipe, gemms: GemmList, lm_head: np.ndarray | None = None,
                 quantize_lm_head: bool = False, model: ModelSpec | None = None,
                 lm_head_precision: str | None = None) -> list[PrecisionRecipe]:
    """``recipes[j]`` for GEMM row ``j``; ``lm_head`` marks the lm_head rows (``lm_head_precision``: their
    own precision, whatever ``recipe``'s)."""
    mask = np.zeros(len(gemms), dtype=bool) if lm_head is None else lm_head
    cells = None
    if model is not None and recipe.name in MIXES:
        from roofline.spec.gguf_mix import cell_recipes as mix_cells

        # a mix's lm_head is what its quantizer writes for output.weight (Q6_K, or Q8_0 where the row length asks)
        cells = mix_cells(recipe.name, gemms.names, model=model, quantize_lm_head=True)
    if cells is None:
        cells = [lm_head_recipe(recipe, quantize_lm_head, int(gemms.k[j])) if is_lm else recipe
                 for j, is_lm in enumerate(mask)]
    if lm_head_precision:  # a per-tensor mix's lm_head too
        cells = [get_recipe(lm_head_precision) if is_lm else c for c, is_lm in zip(cells, mask)]
    return cells
