"""The workloads `validate` measures, as the step evaluator and the realistic model see them: its
compiled encoder (fused QKV, no embeddings: it takes hidden states) and a single linear compiled
and called on its own. `validate` runs one process on every core of the measured host: one
instance of all cores."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from roofline.calc.shapes import GemmList, gemm_list
from roofline.model.efficiency import efficiency_for
from roofline.model.realistic import Efficiency, Realistic, realistic_step
from roofline.model.resources import Resources, make_layout
from roofline.model.step import StepEval, evaluate_step
from roofline.model.workload import make_workload
from roofline.results.validate import RECIPE_OF
from roofline.spec.calibration import Calibration
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import PrecisionRecipe, get_recipe
from roofline.spec.stack import StackProfile


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

    def efficiency(self, calibration: Calibration | None, precision: str, stack: StackProfile | None) -> Efficiency:
        return efficiency_for(calibration, precision, self.mode, stack=stack, res=self.res,
                              cells=[self.recipe] * len(self.gemms), gemms=self.gemms)


def host_resources(platform: Platform, memory_model: str = "levels", bandwidth: str = "measured",
                   sockets: int | None = None, cores: int | None = None) -> Resources:
    """One process on every core used (default: all of the measured host's)."""
    cores = int(platform.cores_per_socket.value) if cores is None else cores
    layout = make_layout(platform, sockets=sockets, cores=cores, instance_cores=cores)
    return Resources(platform, layout, memory_model, bandwidth)


def encoder_run(platform: Platform, spec: ModelSpec, precision: str, layers: int, batch: int, seq_len: int,
                mode: str, cores: int | None = None, embeddings: bool = False) -> Harness:
    """The validate encoder of ``layers`` layers in ``precision`` (a validate variant name) with its
    non-GEMM work in ``mode``, on ``cores`` cores (default: all), fed hidden states (no embeddings)."""
    recipe = get_recipe(RECIPE_OF.get(precision, precision))
    model = dataclasses.replace(spec, num_hidden_layers=layers, measured=())
    work = make_workload(model, "forward", batch, seq_len, None)
    gemms, _ = work.gemms()
    res = host_resources(platform, cores=cores)
    step = evaluate_step(res, [recipe] * len(gemms), gemms, ops=work.ops(embeddings=embeddings), non_gemm_mode=mode)
    return Harness(res, recipe, gemms, step, mode)


def shape_run(platform: Platform, precision: str, name: str, m: int, n: int, k: int, **resources) -> Harness:
    """One linear ``Y[m,n] = X[m,k] W[n,k]^T`` compiled and called on its own (FP32 in and out) by one process
    on every core; its weight set is this one weight (a microbenchmark reuses it, so it stays in whatever
    level holds it). ``resources``: :func:`host_resources`' keywords."""
    recipe = get_recipe(RECIPE_OF.get(precision, precision))
    gemms = gemm_list([(name, m, n, k, 1)])
    res = host_resources(platform, **resources)
    return Harness(res, recipe, gemms, evaluate_step(res, [recipe], gemms), "fp32")


def realistic_encoder(platform: Platform, spec: ModelSpec, precision: str, layers: int, batch: int, seq_len: int,
                      mode: str, calibration: Calibration | None, stack: StackProfile | None = None,
                      cores: int | None = None) -> Realistic:
    """Ceiling and realistic time of the validate encoder in ``precision``."""
    h = encoder_run(platform, spec, precision, layers, batch, seq_len, mode, cores=cores)
    return h.realistic(h.efficiency(calibration, precision, stack))


def realistic_shape(platform: Platform, precision: str, name: str, m: int, n: int, k: int,
                    calibration: Calibration | None, stack: StackProfile | None = None,
                    cores: int | None = None) -> Realistic:
    """Ceiling and realistic time of one compiled linear called on its own, as `validate` times it."""
    h = shape_run(platform, precision, name, m, n, k, cores=cores)
    return h.realistic(h.efficiency(calibration, precision, stack), graph=False)
