"""The deployable variants of a float model, one per precision, built with torchao's public API.

The reference paper's configs (DESIGN.md), as torchao 0.18 spells them:

- ``int8-dynamic``: ``SmoothQuantConfig(Int8DynamicActivationInt8WeightConfig(version=2,
  granularity=[PerRow(), PerRow()]), alpha=0.5)``: per-token activation, per-channel weight scales
- ``int8-static``: ``SmoothQuantConfig(Int8StaticActivationInt8WeightConfig(
  granularity=[PerTensor(), PerRow()]), alpha=0.5)``: one calibrated activation scale per tensor
- ``bf16``: the float model under ``torch.autocast("cpu", torch.bfloat16)``
- ``int8-static-pt2e`` (optional): PT2E export + ``X86InductorQuantizer`` (u8 activations)

Weight-only (decode-shaped GEMMs), on the model cast to BF16, BF16 activations:

- ``bf16-weights``: the BF16 model as is (the baseline the weight-only paths compress)
- ``int8-weight-only``: ``Int8WeightOnlyConfig(granularity=PerRow())`` -> ``aten._weight_int8pack_mm``
- ``int4-weight-only``: ``torchao.prototype.quantization.int4.PrototypeInt4WeightOnlyConfig(group_size=128)``
  -> ``quantized.int4mm_packed_weight_cpu``. (torchao 0.18's ``Int4WeightOnlyConfig`` has no CPU
  packing format; its DA8W4 CPU kernel is not in the PyPI wheel.)

SmoothQuant runs PREPARE, calibration on the given batches, then CONVERT. ``quantize_`` cannot
replace a root module, so models are wrapped in a parent first.
"""

from __future__ import annotations

import copy

import torch
import torch.nn as nn

VARIANTS = ("fp32", "bf16", "int8-dynamic", "int8-static")
OPTIONAL_VARIANTS = ("int8-static-pt2e",)
#: weight-only paths torchao 0.18 runs on x86 CPUs, on a BF16 model (see the module docstring)
WEIGHT_ONLY_VARIANTS = ("bf16-weights", "int8-weight-only", "int4-weight-only")


class Parent(nn.Module):
    """A wrapper, because ``quantize_`` cannot replace a root module."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)


class AutocastBF16(nn.Module):
    """The float model under BF16 autocast, FP32 in and out."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.inner(x).float()


class BF16IO(nn.Module):
    """BF16 weights and activations inside; FP32 in and out, like the other variants."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x.to(torch.bfloat16)).float()


def build_variant(name: str, model, calibration: list, example):
    """A fresh copy of ``model`` (float, eval) prepared for ``name``; the original is untouched."""
    m = Parent(copy.deepcopy(model)).eval()
    if name == "fp32":
        return m
    if name == "bf16":
        return AutocastBF16(m)
    if name in ("int8-dynamic", "int8-static"):
        from torchao.prototype.smoothquant import SmoothQuantConfig
        from torchao.quantization import (
            Int8DynamicActivationInt8WeightConfig,
            Int8StaticActivationInt8WeightConfig,
            quantize_,
        )
        from torchao.quantization.granularity import PerRow, PerTensor
        from torchao.quantization.quantize_.common.quantization_step import QuantizationStep

        base = (Int8DynamicActivationInt8WeightConfig(version=2, granularity=[PerRow(), PerRow()])
                if name == "int8-dynamic" else Int8StaticActivationInt8WeightConfig(granularity=[PerTensor(), PerRow()]))
        cfg = SmoothQuantConfig(base_config=base, step=QuantizationStep.PREPARE, alpha=0.5)
        quantize_(m, cfg)
        with torch.no_grad():
            for batch in calibration:
                m(batch)
        cfg.step = QuantizationStep.CONVERT
        quantize_(m, cfg)
        return m
    if name == "int8-static-pt2e":
        import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        exported = torch.export.export(m, (example,)).module()
        quantizer = xiq.X86InductorQuantizer()
        quantizer.set_global(xiq.get_default_x86_inductor_quantization_config(is_dynamic=False))
        prepared = prepare_pt2e(exported, quantizer)
        with torch.no_grad():
            for batch in calibration:
                prepared(batch)
        return convert_pt2e(prepared)
    if name in WEIGHT_ONLY_VARIANTS:
        return _weight_only(name, m)
    raise ValueError(f"unknown variant {name!r} (known: {', '.join(VARIANTS + OPTIONAL_VARIANTS + WEIGHT_ONLY_VARIANTS)})")


def _weight_only(name: str, m):
    m = m.to(torch.bfloat16)
    if name == "int8-weight-only":
        from torchao.quantization import Int8WeightOnlyConfig, quantize_
        from torchao.quantization.granularity import PerRow

        quantize_(m, Int8WeightOnlyConfig(granularity=PerRow()))
    elif name == "int4-weight-only":
        from torchao.prototype.quantization.int4 import PrototypeInt4WeightOnlyConfig
        from torchao.quantization import quantize_

        quantize_(m, PrototypeInt4WeightOnlyConfig(group_size=128))
    return BF16IO(m)


def quantized_weights(module) -> tuple[int, int]:
    """(linear weights that are quantized tensor subclasses, all linear weights) in ``module``."""
    total = quantized = 0
    for sub in module.modules():
        if isinstance(sub, nn.Linear):
            total += 1
            if type(sub.weight).__name__ not in ("Parameter", "Tensor"):
                quantized += 1
    return quantized, total
