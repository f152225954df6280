"""Decode-shaped GEMMs (M = 1..8) on the weight-only paths, against the probed DRAM bandwidth.

A decode step streams every weight once per token, so its ceiling is the DRAM bandwidth. A
microbenchmark that reuses one small weight would measure the cache instead; here one call runs
``copies`` distinct linear layers of the model's FFN-down shape on the same input and sums their
outputs, with ``copies`` chosen so the weights are at least 4x the LLC. The figure reported is
the weight bytes streamed per second, as a fraction of the probed DRAM read bandwidth.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn as nn
from roofline.validation.kernels import TimingSettings, timed_and_verified
from roofline.validation.prepare import prepare_variants
from roofline.validation.variants import WEIGHT_ONLY_VARIANTS

from roofline.calc.gemm import weight_meta_bytes
from roofline.model.shape import shape_ceiling
from roofline.model.suspect import suspect_input, violation_text
from roofline.results.validate import DecodeKernelResult
from roofline.spec.platform import Platform
from roofline.spec.precision import VARIANT_RECIPES as RECIPE
from roofline.spec.precision import get_recipe


def _weight_bytes(precision: str, n: int, k: int) -> float:
    r = get_recipe(RECIPE[precision])
    return r.e_w * n * k + float(weight_meta_bytes(n, k, r.w_scale, r.w_group_size, r.scale_bytes, r.w_zero_point))


class Stack(nn.Module):
    """``copies`` distinct linear layers of one shape on the same input, their outputs summed: one call
    streams every copy's weights."""

    def __init__(self, copies: int, n: int, k: int):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(k, n, bias=False) for _ in range(copies))

    def forward(self, x):
        y = self.layers[0](x)
        for layer in self.layers[1:]:
            y = y + layer(x)
        return y


def run_decode_kernels(n: int, k: int, ms: list[int], platform: Platform, s: TimingSettings,
                       progress: Callable[[str], None] = lambda x: None,
                       precisions: tuple[str, ...] = WEIGHT_ONLY_VARIANTS) -> list[DecodeKernelResult]:
    llc = platform.llc_domain_bytes * int(platform.sockets.value)
    b_mem = platform.dram_bytes_per_s(int(platform.sockets.value))
    out = []
    for precision in precisions:
        per_copy = _weight_bytes(precision, n, k)
        copies = max(2, math.ceil(4 * llc / per_copy))

        g = torch.Generator().manual_seed(n * 31 + k)
        model = Stack(copies, n, k)
        with torch.no_grad():
            for layer in model.layers:
                layer.weight.copy_(torch.randn(n, k, generator=g) / k**0.5)
        model.eval()
        for m in ms:
            progress(f"decode {precision} M={m}")
            example = torch.randn(m, k, generator=g)
            with torch.no_grad():
                reference = sum(example.double() @ layer.weight.double().t() for layer in model.layers)
            prepared = prepare_variants(model, example, [example], reference, [precision], layers=1)
            p = prepared[precision]
            timings = timed_and_verified(prepared, lambda x=example: x.clone(), s)
            t = timings.get(precision)
            flops = 2.0 * m * n * k * copies
            ceiling = shape_ceiling(_dram_only(platform), RECIPE[precision], m, n, k)
            wbytes = per_copy * copies
            measured = flops / t.seconds if t else None
            violation = measured is not None and measured > ceiling.attainable_ops_per_s
            suspect = suspect_input(platform, ceiling.compute_path, ceiling.bound_by) if violation else None
            extra = [violation_text(f"{measured / 1e9:.3g} Gops/s", f"{ceiling.attainable_ops_per_s / 1e9:.3g} "
                                    f"({ceiling.bound_by}-bound)", suspect)] if suspect else []
            out.append(DecodeKernelResult(
                name="ffn_down", m=m, n=n, k=k, copies=copies, precision=precision, kernel=p.kernels.describe(),
                numerics_ok=p.numerics_ok, max_rel_error=p.rel_error, quantized=p.quantized, weight_bytes=wbytes,
                measured_s=t.seconds if t else None, achieved_bytes_per_s=wbytes / t.seconds if t else None,
                dram_bytes_per_s=b_mem, bandwidth_fraction=wbytes / t.seconds / b_mem if t else None,
                measured_ops_per_s=flops / t.seconds if t else None, predicted_ops_per_s=ceiling.attainable_ops_per_s,
                achieved_fraction=flops / t.seconds / ceiling.attainable_ops_per_s if t else None,
                spread=t.spread if t else None, ceiling_violation=violation,
                suspect=suspect.input.value if suspect else None,
                flags=list(p.flags) + ([t.contention] if t and t.contention else []) + extra,
            ))
        del model
    return out


def _dram_only(platform: Platform) -> Platform:
    """The platform with no LLC bandwidth: these weights are sized to stream from DRAM."""
    import dataclasses

    from roofline.spec.sourced import Sourced

    llc = dataclasses.replace(platform.llc, read_gb_per_s=Sourced(unknown="weights sized beyond the LLC"))
    return dataclasses.replace(platform, llc=llc)
