"""The workloads `validate` measures, as the step evaluator and the realistic model see them: its
compiled encoder (fused QKV, no embeddings: it takes hidden states) and a single linear compiled
and called on its own. `validate` runs one process on every core of the measured host: one
instance of all cores."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from roofline.calc.shapes import GemmList, gemm_list
from roofline.estimate.efficiency import efficiency_for
from roofline.estimate.realistic import Efficiency, Realistic, realistic_step
from roofline.estimate.resources import Resources, make_layout
from roofline.estimate.step import StepEval, evaluate_step
from roofline.estimate.workload import make_workload
from roofline.results.validate import RECIPE_OF
from roofline.spec.calibration import Calibration
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import PrecisionRecipe, get_recipe


@dataclass(frozen=True)
class Harness:
    """One evaluated harness run: the resources, the recipe, the GEMMs and the step roofline."""

    res: Resources
    recipe: PrecisionRecipe
    gemms: GemmList
    step: StepEval
    mode: str

    def realistic(self, eff: Efficiency, graph: bool = True) -> Realistic:
        return realistic_step(self.res, self.recipe, self.gemms, self.step, mode=self.mode, eff=eff, graph=graph)


def host_resources(platform: Platform, memory_model: str = "levels") -> Resources:
    """One process on every core of the measured host."""
    cores = int(platform.cores_per_socket.value)
    return Resources(platform, make_layout(platform, instance_cores=cores), memory_model)


def encoder_run(platform: Platform, spec: ModelSpec, precision: str, layers: int, batch: int, seq_len: int,
                mode: str) -> Harness:
    """The validate encoder of ``layers`` layers in ``precision`` (a validate variant name) with its
    non-GEMM work in ``mode``."""
    recipe = get_recipe(RECIPE_OF.get(precision, precision))
    model = dataclasses.replace(spec, num_hidden_layers=layers, measured=())
    work = make_workload(model, "forward", batch, seq_len, None)
    gemms, _ = work.gemms()
    res = host_resources(platform)
    step = evaluate_step(res, [recipe] * len(gemms), gemms, ops=work.ops(embeddings=False), non_gemm_mode=mode)
    return Harness(res, recipe, gemms, step, mode)


def shape_run(platform: Platform, precision: str, name: str, m: int, n: int, k: int) -> Harness:
    """One linear ``Y[m,n] = X[m,k] W[n,k]^T`` compiled and called on its own (FP32 in and out)."""
    recipe = get_recipe(RECIPE_OF.get(precision, precision))
    gemms = gemm_list([(name, m, n, k, 1)])
    res = host_resources(platform)
    return Harness(res, recipe, gemms, evaluate_step(res, [recipe], gemms), "fp32")


def realistic_encoder(platform: Platform, spec: ModelSpec, precision: str, layers: int, batch: int, seq_len: int,
                      mode: str, calibration: Calibration | None) -> Realistic:
    """Ceiling and realistic time of the validate encoder in ``precision``."""
    h = encoder_run(platform, spec, precision, layers, batch, seq_len, mode)
    return h.realistic(efficiency_for(calibration, precision, mode))


def realistic_shape(platform: Platform, precision: str, name: str, m: int, n: int, k: int,
                    calibration: Calibration | None) -> Realistic:
    """Ceiling and realistic time of one compiled linear called on its own, as `validate` times it."""
    h = shape_run(platform, precision, name, m, n, k)
    return h.realistic(efficiency_for(calibration, precision, "fp32"), graph=False)
