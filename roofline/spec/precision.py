"""Precision recipes: what each precision stores, computes in, and costs.

A recipe fixes the element sizes the GEMM moves (``e_x``, ``e_w``, ``e_y``), the
dtype its multiply runs in (which picks the platform's compute path), the
quantization metadata it reads (scales, zero points), and the mode the
non-GEMM work runs in. The reference paper runs every BF16 and INT8 model
under BF16 autocast (AMP), so those recipes' non-GEMM mode is ``amp-bf16``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from roofline.errors import UnknownNameError
from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.model import NonGemmMode
from roofline.spec.platform import ComputeDtype
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

    def __post_init__(self) -> None:
        if (self.w_scale == "per-group") != (self.w_group_size is not None):
            raise ValueError("w_group_size: give a group size exactly when w_scale is per-group")
        if self.w_group_size is not None and self.w_group_size < 1:
            raise ValueError(f"w_group_size: must be positive, got {self.w_group_size}")

    @property
    def e_x(self) -> float:
        return DTYPE_BYTES[self.x_dtype]

    @property
    def e_w(self) -> float:
        return DTYPE_BYTES[self.w_dtype]

    @property
    def e_y(self) -> float:
        return DTYPE_BYTES[self.y_dtype]

    @property
    def scale_bytes(self) -> float:
        return DTYPE_BYTES[self.scale_dtype]

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
        non_gemm_mode="fp32",
    ),
    PrecisionRecipe(
        name="bf16",
        description="BF16 autocast: BF16 weights, activations and output, BF16 GEMM",
        compute_dtype="bf16", x_dtype="bf16", w_dtype="bf16", y_dtype="bf16",
        non_gemm_mode="amp-bf16",
    ),
    PrecisionRecipe(
        name="int8-dynamic",
        description="W8A8 dynamic: INT8 weights (per-channel scales), activations quantized per token at "
        "run time, FP32 output",
        compute_dtype="int8", x_dtype="int8", w_dtype="int8", y_dtype="fp32",
        x_scale="per-token", w_scale="per-channel",
        non_gemm_mode="amp-bf16",
    ),
    PrecisionRecipe(
        name="int8-static",
        description="W8A8 static (SmoothQuant): INT8 weights (per-channel scales), activations with a "
        "calibrated per-tensor scale, FP32 output",
        compute_dtype="int8", x_dtype="int8", w_dtype="int8", y_dtype="fp32",
        x_scale="per-tensor", w_scale="per-channel",
        non_gemm_mode="amp-bf16",
    ),
    PrecisionRecipe(
        name="int8-mixed-bf16",
        description="W8A8 static with BF16 output (int8-mixed-bf16): half the output bytes, BF16 post-ops",
        compute_dtype="int8", x_dtype="int8", w_dtype="int8", y_dtype="bf16",
        x_scale="per-tensor", w_scale="per-channel",
        non_gemm_mode="amp-bf16",
    ),
)


def get_recipe(name: str) -> PrecisionRecipe:
    try:
        return RECIPES[name]
    except KeyError:
        raise UnknownNameError("precision", name, RECIPES) from None
