"""Precision recipes: what each precision stores, computes in, and costs.

A recipe fixes the element sizes the GEMM moves (``e_x``, ``e_w``, ``e_y``), the
dtype its multiply runs in (which picks the platform's compute path), the
quantization metadata it reads (scales, zero points), and the mode the
non-GEMM work runs in. The reference paper runs every BF16 and INT8 model
under BF16 autocast (AMP), so those recipes' non-GEMM mode is ``amp-bf16``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from roofline.errors import UnknownNameError, UserError
from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.gguf_types import BlockFormat, gguf_recipe_fields
from roofline.spec.op_costs import OP_COSTS, cost
from roofline.spec.platform import ComputeDtype
from roofline.spec.vocab import NonGemmMode, coerce
from roofline.units import DTYPE_BYTES

StorageDtype = Literal["fp32", "bf16", "fp16", "int8", "uint8", "int4"]


@dataclass(frozen=True)
class PrecisionRecipe:
    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    description: str
    compute_dtype: ComputeDtype
    """dtype the GEMM's multiply-accumulate runs in"""
    x_dtype: StorageDtype
    """activation X as the GEMM reads it"""
    w_dtype: StorageDtype
    """weight W as stored"""
    y_dtype: StorageDtype
    """output Y as the GEMM writes it"""
    non_gemm_mode: NonGemmMode
    """how the rest of the model runs"""
    x_scale: Literal["none", "per-tensor", "per-token"] = "none"
    w_scale: Literal["none", "per-channel", "per-group"] = "none"
    w_group_size: int | None = None
    w_zero_point: bool = False
    scale_dtype: StorageDtype = "fp32"
    dequant_cost: str | None = None
    """the modelling constant (:data:`roofline.spec.op_costs.OP_COSTS`) giving the vector ops per weight
    element per call that turn stored weights into compute operands (unpack, zero point, convert,
    scale); priced on the FP32 vector path"""
    activation_sum: bool = False
    """the kernel sums each activation row (the compensation term of unsigned-offset INT4 weights)"""
    block: BlockFormat | None = None
    """a block format (llama.cpp GGUF): e_w is its quantized values' bytes per weight and the per-group
    metadata its scales' and mins' bytes, so e_w + meta is the layout's exact bytes per weight"""
    x_block: BlockFormat | None = None
    """the block format activations are quantized to for an integer dot product (llama.cpp's
    vec_dot_type): e_x is its bytes per element, block scales included"""

    def __post_init__(self) -> None:
        coerce(self, non_gemm_mode=NonGemmMode)
        if (self.w_scale == "per-group") != (self.w_group_size is not None):
            raise ValueError("w_group_size: give a group size exactly when w_scale is per-group")
        if self.w_group_size is not None and self.w_group_size < 1:
            raise ValueError(f"w_group_size: must be positive, got {self.w_group_size}")
        if self.dequant_cost is not None and self.dequant_cost not in OP_COSTS:
            raise ValueError(f"dequant_cost: '{self.dequant_cost}' is not a modelling constant")
        if self.block is not None and (self.w_scale != "per-group" or self.w_group_size != self.block.scale_group
                                       or self.w_zero_point):
            raise ValueError(f"block: a {self.block.name} recipe has per-group scales of {self.block.scale_group} "
                             "weights and no separate zero points")
        if self.x_block is not None and self.x_scale != "none":
            raise ValueError("x_block: the activation block's scales are in e_x; x_scale must be none")

    @property
    def dequant_ops_per_weight(self) -> float:
        """Vector ops per weight to turn stored weights into compute operands: the block format's own count
        (llama.cpp's x86 kernels), else the recipe's modelling constant, else 0."""
        if self.block is not None:
            return self.block.dequant_ops_per_weight
        return cost(self.dequant_cost) if self.dequant_cost else 0.0

    @property
    def e_x(self) -> float:
        return self.x_block.bytes_per_weight if self.x_block else DTYPE_BYTES[self.x_dtype]

    @property
    def e_w(self) -> float:
        return self.block.quant_bytes_per_weight if self.block else DTYPE_BYTES[self.w_dtype]

    @property
    def e_y(self) -> float:
        return DTYPE_BYTES[self.y_dtype]

    @property
    def scale_bytes(self) -> float:
        """Bytes of one weight group's metadata: a scale (and zero point), or a block's scales and mins."""
        return self.block.meta_bytes_per_group if self.block else DTYPE_BYTES[self.scale_dtype]

    @property
    def bytes_per_weight(self) -> float:
        """Stored bytes per weight, scales included, for K a multiple of the group."""
        meta = 0.0 if self.w_scale != "per-group" else self.scale_bytes * (2 if self.w_zero_point else 1) / (
            self.w_group_size or 1)
        return self.e_w + meta

    @property
    def quantized(self) -> bool:
        return self.w_scale != "none"


def _recipes(*recipes: PrecisionRecipe) -> dict[str, PrecisionRecipe]:
    return {r.name: r for r in recipes}


RECIPES: dict[str, PrecisionRecipe] = _recipes(
    PrecisionRecipe(
        name="fp32",
        description="FP32 weights and activations, FP32 GEMM",
        compute_dtype="fp32", x_dtype="fp32", w_dtype="fp32", y_dtype="fp32",
        non_gemm_mode=NonGemmMode.FP32,
    ),
    PrecisionRecipe(
        name="bf16",
        description="BF16 autocast: BF16 weights, activations and output, BF16 GEMM",
        compute_dtype="bf16", x_dtype="bf16", w_dtype="bf16", y_dtype="bf16",
        non_gemm_mode=NonGemmMode.AMP_BF16,
    ),
    PrecisionRecipe(
        name="int8-dynamic",
        description="W8A8 dynamic: INT8 weights (per-channel scales), activations quantized per token at "
        "run time, FP32 output",
        compute_dtype="int8", x_dtype="int8", w_dtype="int8", y_dtype="fp32",
        x_scale="per-token", w_scale="per-channel",
        non_gemm_mode=NonGemmMode.AMP_BF16,
    ),
    PrecisionRecipe(
        name="int8-static",
        description="W8A8 static (SmoothQuant): INT8 weights (per-channel scales), activations with a "
        "calibrated per-tensor scale, FP32 output",
        compute_dtype="int8", x_dtype="int8", w_dtype="int8", y_dtype="fp32",
        x_scale="per-tensor", w_scale="per-channel",
        non_gemm_mode=NonGemmMode.AMP_BF16,
    ),
    PrecisionRecipe(
        name="int8-weight-only",
        description="W8A16: INT8 weights (per-channel BF16 scales) dequantized to BF16 in the kernel, BF16 "
        "activations and output",
        compute_dtype="bf16", x_dtype="bf16", w_dtype="int8", y_dtype="bf16",
        w_scale="per-channel", scale_dtype="bf16", dequant_cost="int8_dequant_ops_per_weight",
        non_gemm_mode=NonGemmMode.AMP_BF16,
    ),
    PrecisionRecipe(
        name="int4-weight-only",
        description="W4A16: INT4 weights with per-group BF16 scales and zero points, dequantized to BF16 in the "
        "kernel (unpack, zero point, convert, scale), BF16 activations and output",
        compute_dtype="bf16", x_dtype="bf16", w_dtype="int4", y_dtype="bf16",
        w_scale="per-group", w_group_size=128, w_zero_point=True, scale_dtype="bf16",
        dequant_cost="int4_dequant_ops_per_weight",
        non_gemm_mode=NonGemmMode.AMP_BF16,
    ),
    PrecisionRecipe(
        name="w4a8",
        description="W4A8: unsigned-offset INT4 weights (per-group BF16 scales) unpacked to INT8 in the kernel, "
        "INT8 per-token activations, INT8 GEMM with a compensation term (a sum per activation row) and "
        "per-group rescaling, BF16 output",
        compute_dtype="int8", x_dtype="int8", w_dtype="int4", y_dtype="bf16",
        x_scale="per-token", w_scale="per-group", w_group_size=128, scale_dtype="bf16",
        dequant_cost="int4_unpack_ops_per_weight", activation_sum=True,
        non_gemm_mode=NonGemmMode.AMP_BF16,
    ),
    PrecisionRecipe(
        name="int8-mixed-bf16",
        description="W8A8 static with BF16 output (int8-mixed-bf16): half the output bytes, BF16 post-ops",
        compute_dtype="int8", x_dtype="int8", w_dtype="int8", y_dtype="bf16",
        x_scale="per-tensor", w_scale="per-channel",
        non_gemm_mode=NonGemmMode.AMP_BF16,
    ),
    PrecisionRecipe(
        name="int8-full",
        description="INT8 end to end, as vendor-tuned stacks run quantized encoders: static INT8 GEMMs that "
        "requantize their output to INT8 in the epilogue (GeLU there too), INT8 attention, residual add and "
        "LayerNorm fused with the requantize (INT8 activations between every kernel)",
        compute_dtype="int8", x_dtype="int8", w_dtype="int8", y_dtype="int8",
        x_scale="per-tensor", w_scale="per-channel",
        non_gemm_mode=NonGemmMode.INT8,
    ),
)


#: precisions that are per-tensor mixes of recipes (roofline.spec.gguf_mix), not one recipe
MIX_NAMES: dict[str, str] = {"q4_k_m": "llama.cpp Q4_K_M", "q4_k_s": "llama.cpp Q4_K_S", "q2_k_s": "llama.cpp Q2_K_S",
                            "gguf": "the weight types stored in a .gguf file",
                            "mxfp4": "MXFP4 experts (4.25 bits per weight), everything else BF16, as gpt-oss ships"}

RECIPES.update(_recipes(*(PrecisionRecipe(**f) for f in gguf_recipe_fields())))

#: llama.cpp's F16 weights (GGUF type F16, the commonest unquantized GGUF): ggml converts each weight and activation
#: (F16's vec_dot_type is F16) to FP32 with F16C and multiplies on the FP32 FMA units (ggml-org/llama.cpp at 0c1e570:
#: ggml/src/ggml-cpu/ggml-cpu.c lines 222-227; GGML_F16_VEC_LOAD is _mm512_cvtph_ps / _mm256_cvtph_ps,
#: ggml/src/ggml-cpu/simd-mappings.h lines 546, 572, 646, 678). The conversions are not priced, so the ceiling stays
#: an upper bound.
F16_GGUF = PrecisionRecipe(
    name="f16",
    description="llama.cpp F16: FP16 weights and activations converted to FP32, FP32 FMA (GGUF type F16)",
    compute_dtype="fp32", x_dtype="fp16", w_dtype="fp16", y_dtype="fp32", non_gemm_mode=NonGemmMode.FP32,
)
RECIPES.update(_recipes(F16_GGUF))
#: float precisions only llama.cpp's GGUF files carry: priced by the GGUF engine's profile, as a block type is
GGUF_FLOATS = frozenset({F16_GGUF.name})


#: the recipe of each precision variant `validate` runs (its own names for some: a PT2E static INT8, BF16 weights)
VARIANT_RECIPES = {"fp32": "fp32", "bf16": "bf16", "int8-dynamic": "int8-dynamic", "int8-static": "int8-static",
                   "int8-static-pt2e": "int8-static", "bf16-weights": "bf16", "int8-weight-only": "int8-weight-only",
                   "int4-weight-only": "int4-weight-only"}


def variant_recipe(name: str) -> PrecisionRecipe:
    """The recipe of a validate variant (:data:`VARIANT_RECIPES`), or of a precision by its own name."""
    return get_recipe(VARIANT_RECIPES.get(name, name))


def get_recipe(name: str, group_size: int | None = None) -> PrecisionRecipe:
    """A recipe by name; ``group_size`` replaces the group size of per-group recipes."""
    try:
        recipe = RECIPES[name]
    except KeyError:
        if name in MIX_NAMES:
            raise UserError(f"--precision {name}: a per-tensor mix ({MIX_NAMES[name]}); this command prices one "
                            f"recipe for every GEMM; `roofline footprint` prices the mix, and roofline.spec.gguf_mix."
                            f"cell_recipes gives its recipe per GEMM") from None
        raise UnknownNameError("precision", name, [*RECIPES, *MIX_NAMES]) from None
    if recipe.block is not None and group_size is not None:
        raise UserError(f"--group-size {group_size}: {name} is a block format with fixed {recipe.w_group_size}-weight "
                        "groups")
    if group_size is not None and recipe.w_scale == "per-group":
        if group_size < 1:
            raise UserError(f"--group-size {group_size}: must be positive")
        recipe = dataclasses.replace(recipe, w_group_size=group_size)
    return recipe
