"""Where the Amdahl inputs come from: the user, a measurement, or the model.

Precedence for each of ``f_GEMM``, ``s_GEMM`` and ``s_non``: a command-line
override, then a measurement in the model's catalog entry that matches the
platform, the baseline precision and the workload exactly, then the roofline
model. Every value carries a one-line source so the report can say which.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofline.spec.model import MeasuredBaseline, ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import PrecisionRecipe


@dataclass(frozen=True)
class Resolved:
    value: float
    source: str


@dataclass(frozen=True)
class Overrides:
    f_gemm: float | None = None
    gemm_speedup: float | None = None
    non_gemm_speedup: float | None = None


def find_measured(
    model: ModelSpec, platform: Platform, baseline: str, batch: int, seq_len: int
) -> MeasuredBaseline | None:
    names = {n.lower() for n in platform.all_names}
    for m in model.measured:
        if m.platform.lower() in names and m.precision == baseline and m.batch == batch and m.seq_len == seq_len:
            return m
    return None


def resolve_f_gemm(measured: MeasuredBaseline | None, override: float | None, modelled: float) -> Resolved:
    if override is not None:
        return Resolved(override, "user: --f-gemm")
    if measured is not None:
        return Resolved(measured.f_gemm, f"measured: {measured.source}")
    return Resolved(modelled, "modelled: roofline of GEMM and non-GEMM work (see left_out)")


def resolve_gemm_speedup(override: float | None, roofline: float) -> Resolved:
    if override is not None:
        return Resolved(override, "user: --gemm-speedup")
    return Resolved(roofline, "roofline: aggregate GEMM throughput ratio from the platform file")


def resolve_non_gemm_speedup(
    measured: MeasuredBaseline | None,
    override: float | None,
    baseline: PrecisionRecipe,
    recipe: PrecisionRecipe,
    modelled: float,
) -> Resolved:
    if override is not None:
        return Resolved(override, "user: --non-gemm-speedup")
    if recipe.non_gemm_mode == baseline.non_gemm_mode:
        return Resolved(1.0, f"same non-GEMM mode as the baseline ({recipe.non_gemm_mode}): 1.0 by definition")
    if measured is not None and recipe.non_gemm_mode in measured.non_gemm_speedup:
        return Resolved(
            measured.non_gemm_speedup[recipe.non_gemm_mode],
            f"measured: {recipe.non_gemm_mode} vs {baseline.non_gemm_mode}, {measured.source}",
        )
    return Resolved(modelled, f"modelled: roofline of the non-GEMM work, {recipe.non_gemm_mode} vs {baseline.non_gemm_mode}")
