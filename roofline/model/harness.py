"""The workloads `validate` measures, as the step pipeline sees them: its compiled encoder (fused QKV,
no embeddings: it takes hidden states) and a single linear compiled and called on its own. `validate`
runs one process on every core of the measured host: one instance of all cores."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from roofline.calc.shapes import GemmList
from roofline.model.build import BuiltStep, CeilingSpec, LayoutSpec, StepOptions, build_steps
from roofline.model.efficiency import NO_EFFICIENCIES, EfficiencySource
from roofline.model.realistic import Efficiency, Realistic, describe, realistic_times
from roofline.model.resources import Resources
from roofline.model.step import StepEval
from roofline.model.workload import LinearWorkload, make_workload
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import PrecisionRecipe
from roofline.spec.vocab import Bandwidth, Ceiling, MemoryModel, NonGemmMode, Phase


@dataclass(frozen=True)
class Harness:
    """One evaluated harness run: the resources, the GEMMs and the built step (its parts priced at no efficiency)."""

    res: Resources
    gemms: GemmList
    built: BuiltStep
    graph: bool

    @property
    def recipe(self) -> PrecisionRecipe:
        return self.built.recipe

    @property
    def step(self) -> StepEval:
        return self.built.step

    @property
    def mode(self) -> NonGemmMode:
        return self.built.mode

    def realistic(self, eff: Efficiency) -> Realistic:
        """The run's realistic time with ``eff`` (its parts are the same whatever the efficiencies)."""
        parts = self.built.parts
        assert parts is not None  # a harness's step is built with its parts (realistic=True)
        return describe(parts, realistic_times(parts, eff.rows(parts, self.graph)), self.recipe, self.res, eff,
                        self.graph, self.mode)

    def efficiency(self, source: EfficiencySource) -> Efficiency:
        return source.efficiency(self.res, self.built.name, self.mode, self.built.cells, self.gemms)


def _host_layout(platform: Platform, sockets: int | None, cores: int | None) -> LayoutSpec:
    """One process on every core used (default: all of the measured host's)."""
    cores = int(platform.cores_per_socket.known_value) if cores is None else cores
    return LayoutSpec(sockets=sockets, cores=cores, instance_cores=cores)


def encoder_run(platform: Platform, spec: ModelSpec, precision: str, layers: int, batch: int, seq_len: int,
                mode: NonGemmMode, cores: int | None = None, embeddings: bool = False,
                ceiling: Ceiling = Ceiling.ATTAINABLE, sockets: int | None = None) -> Harness:
    """The validate encoder of ``layers`` layers in ``precision`` (a validate variant name) with its
    non-GEMM work in ``mode``, by one process on ``cores`` cores (default: all) of each of ``sockets`` sockets
    (default: all), fed hidden states (no embeddings)."""
    model = dataclasses.replace(spec, num_hidden_layers=layers, measured=())
    work = dataclasses.replace(make_workload(model, Phase.FORWARD, batch, seq_len, None), embeddings=embeddings)
    steps = build_steps(platform, work, [precision], layout=_host_layout(platform, sockets, cores),
                        ceiling=CeilingSpec(ceiling=ceiling), options=StepOptions(non_gemm_mode=NonGemmMode(mode), variants=True))
    return Harness(steps.res, steps.gemms, steps[0], True)


def shape_run(platform: Platform, precision: str, name: str, m: int, n: int, k: int, *, sockets: int | None = None,
              cores: int | None = None, memory_model: MemoryModel = MemoryModel.LEVELS,
              bandwidth: Bandwidth | None = None, ceiling: Ceiling = Ceiling.ATTAINABLE) -> Harness:
    """One linear ``Y[m,n] = X[m,k] W[n,k]^T`` compiled and called on its own (FP32 in and out) by one process
    on every core (:class:`~roofline.model.workload.LinearWorkload`)."""
    steps = build_steps(platform, LinearWorkload(name, m, n, k), [precision], layout=_host_layout(platform, sockets, cores),
                        ceiling=CeilingSpec(memory_model, bandwidth, ceiling),
                        options=StepOptions(non_gemm_mode=NonGemmMode.FP32, graph=False, variants=True))
    return Harness(steps.res, steps.gemms, steps[0], False)


def realistic_encoder(platform: Platform, spec: ModelSpec, precision: str, layers: int, batch: int, seq_len: int,
                      mode: NonGemmMode, source: EfficiencySource = NO_EFFICIENCIES, cores: int | None = None) -> Realistic:
    """Ceiling and realistic time of the validate encoder in ``precision``."""
    h = encoder_run(platform, spec, precision, layers, batch, seq_len, mode, cores=cores)
    return h.realistic(h.efficiency(source))


def realistic_shape(platform: Platform, precision: str, name: str, m: int, n: int, k: int,
                    source: EfficiencySource = NO_EFFICIENCIES, cores: int | None = None) -> Realistic:
    """Ceiling and realistic time of one compiled linear called on its own, as `validate` times it."""
    h = shape_run(platform, precision, name, m, n, k, cores=cores)
    return h.realistic(h.efficiency(source))
